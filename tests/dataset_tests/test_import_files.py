"""tuner import files: real md/txt/html/pdf/docx/pptx files generated in tmp, GBK bytes, incremental re-import, errors."""

from __future__ import annotations

import builtins
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tuner.cli import main
from tuner.dataset import load_knowledge_base
from tuner.dataset.importers import STATE, import_files, infer_version, read_family_mapping
from tuner.dataset.importers import _files
from tuner.errors import UserError

HTML = ("<html><head><title>Office news</title></head><body><nav><ul><li><a href='/'>Home</a></li><li><a href='/about'>"
        "About us</a></li><li><a href='/jobs'>Careers</a></li></ul></nav><article><h1>Berlin office</h1><p>The company "
        "opened a new office in Berlin with 120 staff on 4 May 2023. It is the largest office in Europe and hosts the "
        "research team of the firm.</p><p>More hiring is planned for next year, the chief executive said at the "
        "opening ceremony in the city.</p></article><footer>Copyright 2023 Example Corp. All rights reserved.</footer>"
        "</body></html>")


def _pdf(path: Path, text: str, title: str) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title(title)
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 8, text)
    pdf.output(str(path))


def _docx(path: Path, title: str, body: str) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("Internal", style="Normal")
    document.add_paragraph(title, style="Title")
    document.add_paragraph(body)
    document.save(str(path))


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "hr").mkdir(parents=True)
    (src / "hr" / "leave_v1.md").write_text("---\ntags: [hr]\ndate: 2023-05-01\n---\n# Leave policy\n\nStaff get 15 days.\n", encoding="utf-8")
    (src / "hr" / "leave_v2.md").write_text("Intro line\n\n## Leave policy v2\n\nStaff get 20 days.\n", encoding="utf-8")
    (src / "hr" / "休假制度（2024年修订）.txt").write_bytes("员工每年享有带薪年假十五天，自2024年1月起执行。病假另计。".encode("gbk"))
    (src / "news.html").write_text(HTML, encoding="utf-8")
    _pdf(src / "report_2023-05.pdf", "Revenue grew 12 percent in 2023.", "Annual report")
    _docx(src / "手册.docx", "员工手册", "试用期为三个月。")
    (src / "notes.bin").write_bytes(b"\x00\x01")
    return src


def _corpus(kb: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (kb / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    return {row["doc_id"]: row for row in rows}


def test_mixed_folder_titles_texts_metadata(source: Path, tmp_path: Path) -> None:
    result = import_files(source, tmp_path / "kb")
    docs = _corpus(tmp_path / "kb")
    assert sorted(docs) == sorted(result.added) == [
        "hr/leave_v1.md", "hr/leave_v2.md", "hr/休假制度（2024年修订）.txt", "news.html", "report_2023-05.pdf", "手册.docx"]
    assert result.skipped == 1 and not result.failed
    assert docs["hr/leave_v1.md"]["title"] == "Leave policy"
    assert docs["hr/leave_v1.md"]["metadata"]["tags"] == ["hr"]
    assert docs["hr/leave_v1.md"]["metadata"]["inferred"] == {"family": "name-without-version", "date": "front-matter"}
    assert docs["hr/leave_v2.md"]["title"] == "Leave policy v2"  # first heading of any level
    gbk = docs["hr/休假制度（2024年修订）.txt"]
    assert gbk["text"] == "员工每年享有带薪年假十五天，自2024年1月起执行。病假另计。"
    assert gbk["title"] == "休假制度（2024年修订）" and gbk["metadata"]["family"] == "hr/休假制度"
    assert gbk["metadata"]["date"] == "2024-01-01"
    html = docs["news.html"]
    assert html["title"] == "Office news" and "120 staff" in html["text"]
    assert "About us" not in html["text"] and "Careers" not in html["text"] and "rights reserved" not in html["text"]
    pdf = docs["report_2023-05.pdf"]
    assert pdf["title"] == "Annual report" and "Revenue grew 12 percent" in pdf["text"]
    assert pdf["metadata"]["date"] == "2023-05-01" and pdf["metadata"]["inferred"]["date"] == "name"
    assert docs["手册.docx"]["title"] == "员工手册" and "试用期为三个月。" in docs["手册.docx"]["text"]
    assert docs["hr/leave_v2.md"]["metadata"]["family"] == docs["hr/leave_v1.md"]["metadata"]["family"] == "hr/leave"
    meta = docs["news.html"]["metadata"]
    assert meta["path"] == "news.html" and meta["size"] == len(HTML.encode()) and meta["mtime"].endswith("+00:00")
    assert len(load_knowledge_base(tmp_path / "kb").corpus) == 6


def test_pptx_through_markitdown(tmp_path: Path) -> None:
    from pptx import Presentation

    (tmp_path / "src").mkdir()
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Quarterly plan"
    slide.placeholders[1].text = "Ship 3 releases"
    deck.save(str(tmp_path / "src" / "plan.pptx"))
    docs = _corpus(tmp_path / "kb") if import_files(tmp_path / "src", tmp_path / "kb").added else {}
    assert docs["plan.pptx"]["title"] == "Quarterly plan" and "Ship 3 releases" in docs["plan.pptx"]["text"]


def test_incremental_reimport_converts_only_changes(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kb = tmp_path / "kb"
    import_files(source, kb)
    converted: list[str] = []
    real = _files.convert_file
    monkeypatch.setattr(_files, "convert_file", lambda path, data: converted.append(path.name) or real(path, data))
    (source / "hr" / "leave_v2.md").write_text("# Leave policy\n\nStaff get 25 days.\n", encoding="utf-8")
    (source / "news.html").unlink()
    (source / "new.txt").write_text("A new file.", encoding="utf-8")
    result = main(["import", "files", str(source), str(kb)])
    assert result == 0
    assert sorted(converted) == ["leave_v2.md", "new.txt"]
    again = import_files(source, kb)
    assert converted == ["leave_v2.md", "new.txt"] and not again.added and not again.changed and len(again.unchanged) == 6
    docs = _corpus(kb)
    assert "news.html" not in docs and "25 days" in docs["hr/leave_v2.md"]["text"]
    assert json.loads((kb / STATE).read_text(encoding="utf-8"))["files"].keys() == docs.keys()


def test_reimport_prints_added_changed_removed(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = tmp_path / "kb"
    import_files(source, kb)
    (source / "hr" / "leave_v1.md").write_text("# Leave policy\n\nStaff get 16 days.\n", encoding="utf-8")
    (source / "手册.docx").unlink()
    (source / "b.md").write_text("# B\n\nb", encoding="utf-8")
    assert main(["import", "files", str(source), str(kb)]) == 0
    out = capsys.readouterr().out
    assert "6 documents: 1 added, 1 changed, 1 removed, 4 unchanged" in out
    assert "added: b.md" in out and "changed: hr/leave_v1.md" in out and "removed: 手册.docx" in out


def test_unreadable_files_listed_and_strict_writes_nothing(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (source / "broken.pdf").write_bytes(b"not a pdf at all")
    (source / "broken.docx").write_bytes(b"PK not a zip")
    assert main(["import", "files", str(source), str(tmp_path / "kb")]) == 0
    out = capsys.readouterr().out
    assert f"{source / 'broken.pdf'}: unreadable PDF" in out and f"{source / 'broken.docx'}: unreadable DOCX" in out
    assert "2 files not imported (reasons above)" in out and len(_corpus(tmp_path / "kb")) == 6
    assert main(["import", "files", str(source), str(tmp_path / "strict"), "--strict"]) == 2
    assert "2 file(s) could not be imported (--strict); nothing written" in capsys.readouterr().err
    assert not (tmp_path / "strict").exists()


def test_missing_extra_named_in_one_line(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_pypdf(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pypdf" or name.startswith("pypdf."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "pypdf", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_pypdf)
    result = import_files(source, tmp_path / "kb")
    assert result.failed == [(str(source / "report_2023-05.pdf"),
                              "reading a PDF needs the 'docs' extra (pypdf is not installed): pip install 'tuner[docs]'")]


def test_family_mapping_overrides_and_errors(source: Path, tmp_path: Path) -> None:
    mapping = tmp_path / "families.csv"
    mapping.write_text("doc_id,family,date\nnews.html,press,2023-05-04\nghost.md,x,\n", encoding="utf-8")
    result = import_files(source, tmp_path / "kb", families=mapping)
    meta = _corpus(tmp_path / "kb")["news.html"]["metadata"]
    assert (meta["family"], meta["date"], meta["inferred"]) == ("press", "2023-05-04", {"family": "mapping", "date": "mapping"})
    assert result.unmapped == ["ghost.md"]
    yaml_map = tmp_path / "families.yaml"
    yaml_map.write_text("news.html: {date: 2023/05/04}\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"families.yaml: news.html: date '2023/05/04' is not ISO 8601"):
        read_family_mapping(yaml_map)
    bad = tmp_path / "bad.csv"
    bad.write_text("id,family\na,b\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.csv:1: the header must name a doc_id column"):
        read_family_mapping(bad)
    extra = tmp_path / "extra.csv"
    extra.write_text("doc_id,owner\na,b\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"extra.csv:2: unknown key 'owner'"):
        read_family_mapping(extra)


def test_refuses_foreign_dataset_and_missing_source(tmp_path: Path, source: Path) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "corpus.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(UserError, match="not written by 'tuner import files'; pass --force"):
        import_files(source, tmp_path / "kb")
    with pytest.raises(UserError, match="source folder not found"):
        import_files(tmp_path / "nowhere", tmp_path / "kb2")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no importable files"):
        import_files(tmp_path / "empty", tmp_path / "kb3")


@pytest.mark.parametrize(("doc_id", "title", "family", "date", "label"), [
    ("a/Policy_v2.md", "", "a/policy", None, "v2"),
    ("a/Policy v1.3.md", "", "a/policy", None, "v1.3"),
    ("规章/考勤办法修订版.docx", "", "规章/考勤办法", None, "修订版"),
    ("规章/考勤办法（2023年5月）.md", "", "规章/考勤办法", "2023-05-01", None),
    ("plan.md", "Plan for 2016年9月4日", "plan", "2016-09-04", None),
])
def test_infer_version(doc_id: str, title: str, family: str, date: str | None, label: str | None) -> None:
    version = infer_version(doc_id, title)
    assert (version.family, version.date, version.label) == (family, date, label)


def test_file_failing_on_reimport_is_failed_not_removed(source: Path, tmp_path: Path) -> None:
    import_files(source, tmp_path / "kb")
    (source / "手册.docx").write_bytes(b"PK broken now")
    result = import_files(source, tmp_path / "kb")
    assert result.removed == [] and [Path(p).name for p, _ in result.failed] == ["手册.docx"]
    assert "手册.docx" not in _corpus(tmp_path / "kb")
