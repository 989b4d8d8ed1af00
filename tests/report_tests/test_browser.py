"""Open reports in headless Chromium (Debian's package) and check that every plot renders without a script error."""

from __future__ import annotations

import re
import struct
import subprocess
from pathlib import Path

import pytest

from tests.report_tests.offline import outside_references

CHROMIUM = Path("/usr/bin/chromium")
FIGURES = ("front", "hypervolume", "sweet-spot", "importances")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)"),
]


def chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium on ``page``; every host name resolves to nothing, so the page cannot reach any network."""
    command = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
        "--virtual-time-budget=5000", *args, page.resolve().as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


def console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line and ("Uncaught" in line or "Error" in line)]


def test_console_error_detection_sees_a_broken_page(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>notDefinedAnywhere();</script></body></html>", "utf-8")
    result = chromium(page, tmp_path / "profile", "--dump-dom")
    assert any("Uncaught ReferenceError" in line for line in console_errors(result.stderr))


@pytest.mark.slow
def test_every_plot_renders_without_script_errors(report_path: Path, tmp_path: Path) -> None:
    result = chromium(report_path, tmp_path / "profile", "--dump-dom")
    assert console_errors(result.stderr) == []
    dom = result.stdout
    for figure in FIGURES:
        # plotly adds js-plotly-plot and draws its SVG layers only once the figure has rendered.
        rendered = re.search(rf'<div id="{figure}" class="plotly-graph-div js-plotly-plot".*?class="main-svg"', dom, re.S)
        assert rendered, f"figure {figure} did not render"
    assert dom.count('class="main-svg"') >= len(FIGURES)
    assert dom.count('class="point"') > 20
    assert outside_references(dom) == []


def test_screenshot_shows_the_report(report_path: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    result = chromium(report_path, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,4200")
    assert console_errors(result.stderr) == []
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1280, 4200)
    # A blank page of this size compresses to a few kB; four plots and tables take far more.
    assert len(data) > 150_000
