from __future__ import annotations

from tests.report_tests.offline import outside_references


def test_detector_finds_cdn_scripts_stylesheets_and_images() -> None:
    page = (
        '<script src="https://cdn.plot.ly/plotly-3.0.0.min.js"></script>'
        "<link rel='stylesheet' href='//fonts.example/x.css'>"
        '<img src=http://example/a.png><div style="background: url(https://example/b.png)"></div>'
    )
    assert len(outside_references(page)) == 4


def test_detector_ignores_urls_inside_inline_scripts_and_local_links() -> None:
    page = '<script>var u = "https://plotly.com"; /* <link href="https://x"> */</script><a href="#front">front</a>'
    assert outside_references(page) == []
