"""``tuner import files`` under hostile or broken input (issue 30): YAML alias bombs and oversized front matter, links
out of the source folder, and files that used to end the whole import. Each is one ``path: reason`` line, the rest is
imported (exit 0, or 2 with --strict), and no message names the temporary staging folder."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tuner.cli import main
from tuner.dataset.importers import import_files

GOOD = "# Leave policy\n\nStaff get 20 days of paid leave.\n"


def _bomb(levels: int) -> str:
    """Front matter whose aliases expand tenfold per level (the issue's file: 7 levels in 296 bytes)."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, levels)]
    return "---\n" + "\n".join(lines) + "\n---\n# Bomb\n\nText.\n"


def _corpus(kb: Path) -> dict[str, dict[str, Any]]:
    return {row["doc_id"]: row for row in map(json.loads, (kb / "corpus.jsonl").read_text("utf-8").splitlines())}


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.md").write_text(GOOD, "utf-8")
    return src


def test_an_alias_bomb_is_refused_at_once_and_the_rest_imported(source: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (source / "bomb.md").write_text(_bomb(7), "utf-8")
    (source / "big.md").write_text("---\n" + "".join(f"key{n}: {'v' * 60}\n" for n in range(300)) + "---\nText.\n", "utf-8")
    assert main(["import", "files", str(source), str(tmp_path / "kb")]) == 0
    out = capsys.readouterr().out
    assert f"{source / 'bomb.md'}: front matter is not valid YAML (aliases are not allowed, line 2)" in out
    assert f"{source / 'big.md'}: front matter over 16 KiB" in out
    assert sorted(_corpus(tmp_path / "kb")) == ["good.md"]
    assert sum(f.stat().st_size for f in (tmp_path / "kb").iterdir()) < 10_000


def test_front_matter_keeps_scalars_and_lists_of_scalars(source: Path, tmp_path: Path) -> None:
    (source / "meta.md").write_text("---\nauthor: Li\nyear: 2024\ntags: [hr, leave]\nowner: {name: x, team: {a: 1}}\n"
                                    "rows: [[1, 2]]\nupdated: 2024-05-01 10:00:00\nscore: .inf\n---\nText.\n", "utf-8")
    import_files(source, tmp_path / "kb")
    metadata = _corpus(tmp_path / "kb")["meta.md"]["metadata"]
    assert {k: metadata.get(k) for k in ("author", "year", "tags", "owner", "rows", "updated", "score")} == {
        "author": "Li", "year": 2024, "tags": ["hr", "leave"], "owner": None, "rows": None,
        "updated": "2024-05-01 10:00:00", "score": None}


def test_a_link_out_of_the_source_is_not_followed_unless_asked(source: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "outside" / "passwd.txt"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n", "utf-8")
    (source / "passwd.txt").symlink_to(secret)
    (source / "alias.md").symlink_to(source / "good.md")  # a link that stays inside is a file like any other
    assert main(["import", "files", str(source), str(tmp_path / "kb")]) == 0
    out = capsys.readouterr().out
    assert f"{source / 'passwd.txt'}: a link to a file outside the source folder: not followed (--follow-links imports it)" in out
    assert sorted(_corpus(tmp_path / "kb")) == ["alias.md", "good.md"] and "root:x" not in (tmp_path / "kb" / "corpus.jsonl").read_text()
    assert main(["import", "files", str(source), str(tmp_path / "followed"), "--follow-links"]) == 0
    assert _corpus(tmp_path / "followed")["passwd.txt"]["text"].startswith("root:x")


def _truncated_docx(path: Path) -> None:
    import docx

    buffer = io.BytesIO()
    document = docx.Document()
    document.add_paragraph("Probation lasts three months.")
    document.save(buffer)
    with zipfile.ZipFile(buffer) as whole, zipfile.ZipFile(path, "w") as cut:
        for item in whole.infolist():
            data = whole.read(item)
            cut.writestr(item, data[: len(data) // 2] if item.filename == "word/document.xml" else data)


def test_each_bad_file_is_one_line_and_the_rest_is_imported(source: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (source / os.fsdecode(b"bad\xffname.txt")).write_text("A file with a Latin-1 name.", "utf-8")
    (source / "leap.md").write_text("---\ndate: 2024-02-30\n---\nText of a file with an impossible date.\n", "utf-8")
    _truncated_docx(source / "cut.docx")
    (source / "empty.txt").write_bytes(b"")
    (source / "only-front.md").write_text("---\ntitle: Nothing else\n---\n", "utf-8")
    assert main(["import", "files", str(source), str(tmp_path / "kb")]) == 0
    out = capsys.readouterr().out
    lines = {line.partition(": ")[0]: line.partition(": ")[2] for line in out.splitlines() if line.startswith(str(source))}
    assert lines == {
        f"{source}/bad\\xffname.txt": "the file name is not valid UTF-8: rename the file",
        f"{source}/leap.md": "front matter: date '2024-02-30' is not ISO 8601 (YYYY-MM-DD or a datetime)",
        f"{source}/cut.docx": lines[f"{source}/cut.docx"],
        f"{source}/empty.txt": "no text to import (the file is empty or holds only front matter or markup)",
        f"{source}/only-front.md": "no text to import (the file is empty or holds only front matter or markup)",
    }
    assert lines[f"{source}/cut.docx"].startswith("unreadable DOCX (")
    assert "5 files not imported (reasons above)" in out and sorted(_corpus(tmp_path / "kb")) == ["good.md"]
    assert main(["import", "files", str(source), str(tmp_path / "strict"), "--strict"]) == 2
    err = capsys.readouterr().err
    assert "5 file(s) could not be imported (--strict); nothing written" in err and not (tmp_path / "strict").exists()


def test_no_message_names_the_staging_folder(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kb = tmp_path / "kb"
    (source / "warranty.md").write_text("# Warranty\n\nTwo years.\n", "utf-8")
    assert main(["import", "files", str(source), str(kb)]) == 0
    (kb / "golden.jsonl").write_text(json.dumps({"id": "q1", "question": "How long is the warranty?", "ground_truth": "Two years.",
                                                 "relevant_doc_ids": ["warranty.md"], "keypoints": []}) + "\n", "utf-8")
    (source / "warranty.md").unlink()
    capsys.readouterr()
    assert main(["import", "files", str(source), str(kb)]) == 2
    err = capsys.readouterr().err
    assert f"{kb}/golden.jsonl:1" in err and "warranty.md" in err and f".{kb.name}." not in err, err
    assert (kb / "corpus.jsonl").read_text("utf-8").count("\n") == 2  # nothing replaced


def test_binary_bytes_and_dangling_links_are_one_line_each_not_text(source: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # issue 38: a file of NUL bytes was imported as text, a dangling link skipped without a word
    (source / "zeros.txt").write_bytes(b"\x00\x01\x02binary header\x00" * 200)  # valid UTF-8: it was imported
    (source / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    (source / "gone.md").symlink_to(source / "deleted.md")
    (source / "utf16.txt").write_bytes("退货运费由买家承担。".encode("utf-16-le"))  # valid UTF-8 too, full of NULs
    assert main(["import", "files", str(source), str(tmp_path / "kb")]) == 0
    out = capsys.readouterr().out
    assert f"{source / 'zeros.txt'}: binary data, not text (400 NUL bytes)" in out
    assert f"{source / 'image.md'}: unknown text encoding" in out
    assert f"{source / 'gone.md'}: a link to nothing (its target does not exist): skipped" in out
    corpus = _corpus(tmp_path / "kb")
    assert sorted(corpus) == ["good.md", "utf16.txt"] and corpus["utf16.txt"]["text"] == "退货运费由买家承担。"
    assert main(["import", "files", str(source), str(tmp_path / "strict"), "--strict"]) == 2
    only = tmp_path / "only"
    only.mkdir()
    (only / "zeros.txt").write_bytes(bytes(10))
    assert main(["import", "files", str(only), str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.strip().endswith(f"1 could not be imported, the first: {only / 'zeros.txt'}: binary data, "
                                                   "not text (10 NUL bytes)")
