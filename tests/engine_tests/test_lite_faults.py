"""A Milvus Lite database that cannot be opened or read (damaged files, another process holding it, a file where Lite
keeps a folder, a mistyped path, a name Milvus refuses) is one line on stderr and exit 2: the reason in it, no
milvus_lite or pymilvus traceback, nothing created by a command that only reads (issue 54 §2 items 7–10)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")

from tuner.cli import main  # noqa: E402
from tuner.dataset import load_dataset  # noqa: E402
from tuner.embedding import EmbeddingContext  # noqa: E402
from tuner.engine import MilvusEngine, MilvusPipeline, parse_engine  # noqa: E402
from tuner.errors import UserError  # noqa: E402
from tuner.settings import RetrievalSettings  # noqa: E402

DENSE = RetrievalSettings(retriever="dense")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, tiny_dataset_dir: Path, embeddings: EmbeddingContext) -> tuple[Path, str]:
    """A Lite database holding the collection tuner builds for the tiny dataset, closed again; and its name."""
    path = tmp_path_factory.mktemp("lite") / "kb.db"
    pipeline = MilvusPipeline(load_dataset(tiny_dataset_dir), MilvusEngine(backend="milvus", uri=str(path)), embeddings=embeddings)
    name = pipeline.collection(DENSE).name
    pipeline.client.close()
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(str(path))  # as another process finds it: no server of this one holds it
    return path, name


def _copy(built: tuple[Path, str], tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the built database and its collection's folder."""
    source, name = built
    copy = tmp_path / "copy.db"
    shutil.copytree(source, copy)
    return copy, copy / "collections" / name


def _one_line(capfd: pytest.CaptureFixture[str]) -> str:
    err = capfd.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda folder: next((folder / "partitions").rglob("*.parquet")).write_bytes(b"PAR1 truncated"), "Parquet magic bytes"),
    (lambda folder: (folder / "schema.json").write_text(""), "schema.json' is not valid JSON"),
])
def test_a_damaged_file_of_the_database_is_one_line_with_its_reason(
    built: tuple[Path, str], tmp_path: Path, damage: object, reason: str, capfd: pytest.CaptureFixture[str]
) -> None:
    copy, folder = _copy(built, tmp_path)
    damage(folder)  # type: ignore[operator]
    assert main(["engine", "ls", str(copy)]) == 2
    assert reason in _one_line(capfd)


def test_a_damaged_index_file_is_one_line_naming_the_collection_not_a_bug(
    built: tuple[Path, str], tmp_path: Path, tiny_dataset_dir: Path, embeddings: EmbeddingContext,
    capfd: pytest.CaptureFixture[str],
) -> None:
    copy, folder = _copy(built, tmp_path)
    for index in (folder / "partitions").rglob("*.idx"):
        index.write_bytes(b"garbage")
    pipeline = MilvusPipeline(load_dataset(tiny_dataset_dir), MilvusEngine(backend="milvus", uri=str(copy)), embeddings=embeddings)
    with pytest.raises(UserError, match=rf"collection {built[1]} cannot be loaded \(its files damaged\?\): .+; tuner engine gc --yes removes it"):
        pipeline.collection(DENSE)
    assert capfd.readouterr().err.strip() == ""  # the reason is in the error, not in logs beside it


def test_a_file_where_lite_keeps_a_folder_is_one_line(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "kb.db").write_text("garbage")
    assert main(["engine", "ls", str(tmp_path / "kb.db")]) == 2
    assert "is a file, not a Milvus Lite database" in _one_line(capfd)


def test_reading_commands_never_create_a_database(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    for action in ("ls", "gc"):
        assert main(["engine", action, str(tmp_path / "typo.db")]) == 2
        assert "no Milvus Lite database at" in _one_line(capfd)
    assert not (tmp_path / "typo.db").exists()


def test_a_database_another_process_holds_is_named_so(built: tuple[Path, str], tmp_path: Path,
                                                      capfd: pytest.CaptureFixture[str]) -> None:
    copy, _ = _copy(built, tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pymilvus import MilvusClient\n"
         "MilvusClient(uri=sys.argv[1]).list_collections()\nprint('held', flush=True)\ntime.sleep(120)", str(copy)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert main(["engine", "ls", str(copy)]) == 2
        assert "another process holds it" in _one_line(capfd)
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("name", ["kb\nx", "kb-1", "1kb", "k" * 65])
def test_a_database_name_milvus_refuses_is_refused_before_connecting(name: str, tmp_path: Path,
                                                                     capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["engine", "ls", str(tmp_path / "kb.db"), "--db", name]) == 2
    assert "db_name" in (err := _one_line(capfd)) and "is no Milvus name" in err
    assert not (tmp_path / "kb.db").exists()


def test_an_attached_collection_name_milvus_refuses_is_refused_with_its_key() -> None:
    with pytest.raises(UserError, match=r"^study.yaml: engine.milvus.collection: 'docs\\n' is no Milvus name"):
        parse_engine({"backend": "milvus", "uri": "kb.db", "collection": "docs\n",
                      "fields": {"text": "t", "vector": "v", "doc_id": "d"}}, "study.yaml")
