from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.dataset import CONFLICTS, CORPUS, GOLDEN, Conflict, Dataset, generate_demo, load_dataset, resolve_dataset
from tuner.dataset.demo import GENERATOR_VERSION, demo_records
from tuner.errors import UserError


def _digest(folder: Path) -> str:
    return hashlib.sha256(b"".join((folder / name).read_bytes() for name in (CORPUS, GOLDEN, CONFLICTS))).hexdigest()


# Per language: how a page states its effective date, the archive marker of old editions' titles, and the
# shortest keypoint alias allowed ("5%" and "6期" are complete Chinese answers).
EFFECTIVE = {"en": r"Effective (\w+ \d+, \d{4})", "zh": r"生效日期：(\d{4}年\d{1,2}月\d{1,2}日)"}
ARCHIVE = {"en": "archive", "zh": "归档"}
SHORTEST_ALIAS = {"en": 3, "zh": 2}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return generate_demo(tmp_path_factory.mktemp("demo") / "seed0", 0)


@pytest.fixture(scope="module", params=["en", "zh"])
def any_demo(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Dataset]:
    """The demo of seed 0 in each language, for the guarantees both languages give."""
    language: str = request.param
    return language, generate_demo(tmp_path_factory.mktemp(f"demo-{language}") / "seed0", 0, language=language)


def test_same_seed_same_bytes_other_seed_differs(tmp_path: Path) -> None:
    for name, seed in (("a", 0), ("b", 0), ("c", 1)):
        generate_demo(tmp_path / name, seed)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    assert _digest(tmp_path / "a") != _digest(tmp_path / "c")


def test_english_content_is_pinned(tmp_path: Path) -> None:
    """The English demo's bytes, as computed when version metadata (family, date, status) was added; the texts, questions
    and conflicts are those computed on main before the generator learned a second language: refactoring the generator
    must not change them (a change to the content bumps GENERATOR_VERSION and this hash)."""
    assert generate_demo(tmp_path / "seed0", 0).content_hash == "0ec1369c60e2aca1f4c60e2933cb5863a5ab581af9437a7c15db39cd1cfb4c9f"
    assert generate_demo(tmp_path / "seed7", 7).content_hash == "62a372db9b9b4f09142d7e39ea0d2e34696f3212d3cc932722081265dfc1e81e"


def test_generation_is_fast() -> None:
    start = time.perf_counter()
    demo_records(7)
    assert time.perf_counter() - start < 2.0


def test_counts_and_sizes(demo: Dataset) -> None:
    assert load_dataset(demo.path).content_hash == demo.content_hash
    assert len(demo.corpus) >= 300
    assert 170 <= len(demo.golden) <= 190
    words = [len(d.text.split()) for d in demo.corpus]
    long_share = sum(w > 350 for w in words) / len(words)
    assert 0.12 <= long_share <= 0.18
    assert all(w <= 600 for w in words)
    assert all(w >= 60 for w in words if w <= 350)
    assert all(w <= 200 for w in words if w <= 350)
    assert sum(words) + sum(len(c.text.split()) for c in demo.conflicts) <= 70_000


def test_stale_versions_cover_a_third_and_differ(any_demo: tuple[str, Dataset]) -> None:
    language, demo = any_demo
    texts = {d.doc_id: d.text for d in demo.corpus}
    stale_targets = {c.conflicts_with for c in demo.conflicts}
    assert len(stale_targets) / len(demo.corpus) >= 0.30
    assert {c.kind for c in demo.conflicts} == {"stale_version"}
    assert {c.severity for c in demo.conflicts} == {"subtle", "moderate", "obvious"}
    for conflict in demo.conflicts:
        current = texts[conflict.conflicts_with]
        assert conflict.wrong_values
        for value in conflict.wrong_values:
            assert value in conflict.text and value not in current
        effective = re.search(EFFECTIVE[language], current)
        assert effective and effective.group(1) not in conflict.text


def test_categories_difficulties_and_keypoints(any_demo: tuple[str, Dataset]) -> None:
    language, demo = any_demo
    categories = Counter(c.category for c in demo.golden)
    assert set(categories) == {"single_hop", "multi_hop", "long_tail"}
    assert min(categories.values()) >= 30
    assert {c.difficulty for c in demo.golden} == {"easy", "medium", "hard"}
    texts = {d.doc_id: d.text for d in demo.corpus}
    for case in demo.golden:
        assert 1 <= len(case.keypoints) <= 3
        if case.category == "multi_hop":
            assert len(set(case.relevant_doc_ids)) == 2
        for keypoint in case.keypoints:
            # The first alias is the form the document writes; the others are what an answer may say instead.
            assert any(keypoint[0] in texts[doc] for doc in case.relevant_doc_ids), (case.id, keypoint)
            assert all(len(alias) >= SHORTEST_ALIAS[language] and not alias.isdigit() for alias in keypoint)


def _editions(demo: Dataset) -> dict[str, list[Conflict]]:
    editions: dict[str, list[Conflict]] = {}
    for conflict in demo.conflicts:
        editions.setdefault(conflict.conflicts_with, []).append(conflict)
    return editions


def test_wrong_answers_come_from_stale_versions(any_demo: tuple[str, Dataset]) -> None:
    _language, demo = any_demo
    editions = _editions(demo)
    with_wrong = [case for case in demo.golden if case.wrong_answers]
    assert len(with_wrong) >= 60
    for case in with_wrong:
        sources = [e.text for d in case.relevant_doc_ids for e in editions.get(d, [])]
        assert all(any(w in text for text in sources) for w in case.wrong_answers)
        assert not any(w in case.ground_truth for w in case.wrong_answers)


def test_several_dated_editions_drift_away_from_the_current_value(any_demo: tuple[str, Dataset]) -> None:
    """Every stale document has several older editions under an archive title; a changed fact takes a
    different older value in each edition, and every such value is a wrong answer of the case asking it."""
    language, demo = any_demo
    titles = {d.doc_id: d.title for d in demo.corpus}
    editions = _editions(demo)
    assert {len(group) for group in editions.values()} == {2, 3}
    drifting = 0
    for doc_id, group in editions.items():
        dates = [e.doc_id.removeprefix(f"{doc_id}-") for e in group]
        assert dates == sorted(dates, reverse=True) and len(set(dates)) == len(dates)
        assert all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", d) for d in dates)
        assert all(e.title != titles[doc_id] and ARCHIVE[language] in e.title for e in group)
        values = [v for e in group for v in e.wrong_values]
        drifting += len(set(values)) > len(group[0].wrong_values)
    assert drifting == len(editions)
    for case in demo.golden:
        if len(case.relevant_doc_ids) == 1 and case.wrong_answers:
            (doc,) = case.relevant_doc_ids
            stated = {v for e in editions[doc] for v in e.wrong_values}
            assert len(case.wrong_answers) >= 2 and set(case.wrong_answers) <= stated


def test_near_duplicates_and_namesakes(any_demo: tuple[str, Dataset]) -> None:
    _language, demo = any_demo
    families = Counter(d.metadata["product_line"] for d in demo.corpus if d.metadata["kind"] == "product")
    assert min(families.values()) >= 4
    namesakes = {d.metadata["product_line"] for d in demo.corpus if d.metadata["kind"] == "partner"} & set(families)
    assert len(namesakes) >= 6


def test_resolve_dataset_demo_is_cached_and_idempotent(tmp_path: Path) -> None:
    first = resolve_dataset("demo")
    stamp = (first / CORPUS).stat().st_mtime_ns
    assert resolve_dataset("demo:0") == first
    assert (first / CORPUS).stat().st_mtime_ns == stamp
    assert first.name == f"demo-seed0-v{GENERATOR_VERSION}"
    assert resolve_dataset("demo:3").name == f"demo-seed3-v{GENERATOR_VERSION}"
    assert resolve_dataset(str(tmp_path)) == tmp_path
    with pytest.raises(UserError, match="integer"):
        resolve_dataset("demo:x")


def test_demo_data_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "kb"
    assert main(["demo-data", str(target), "--seed", "2"]) == 0
    assert "310 documents" in capsys.readouterr().out
    before = _digest(target)
    assert main(["demo-data", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--force" in err[0]
    assert _digest(target) == before
    assert main(["demo-data", str(target), "--force"]) == 0
    assert _digest(target) != before


def test_racing_processes_build_the_demo_once(tmp_path: Path) -> None:
    script = "from tuner.dataset import resolve_dataset; print(resolve_dataset('demo:5'))"
    env = {**os.environ, "TUNER_CACHE": str(tmp_path)}
    workers = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outputs = {worker.communicate(timeout=60)[0].strip() for worker in workers}
    assert all(worker.returncode == 0 for worker in workers)
    folder = tmp_path / "datasets" / f"demo-seed5-v{GENERATOR_VERSION}"
    assert outputs == {str(folder)}
    assert load_dataset(folder).content_hash == generate_demo(tmp_path / "fresh", 5).content_hash
    assert sorted(p.name for p in (tmp_path / "datasets").iterdir()) == [folder.name]


def test_the_demo_records_that_its_generator_wrote_its_labels(any_demo: tuple[str, Dataset], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # README command 1 ended with "labels: labels of unknown origin (no golden.provenance.json)"
    from tuner.dataset import labels_line

    language, dataset = any_demo
    labels = dataset.provenance
    assert labels is not None and labels.generated_by == f"the demo generator (tuner demo-data --lang {language} --seed 0)"
    assert labels.cases == len(dataset.golden) and not labels.pooled("bm25", 1)
    assert labels_line(labels) == (f"labels written with the documents by {labels.generated_by}: {len(dataset.golden)} cases, "
                                   "each question's relevant documents known by construction (no candidate pool, so no pooling bias)")
    assert load_dataset(dataset.path).provenance == labels  # read back from golden.provenance.json
    assert main(["eval", str(dataset.path), "--retriever", "bm25", "--top-k", "2", "--json"]) == 0
    import json

    printed = json.loads(capsys.readouterr().out)["labels"]
    assert printed["known"] is True and printed["generated_by"] == labels.generated_by and "recall_lower_bound" not in printed


def test_replacing_a_dataset_drops_the_provenance_of_the_labels_it_replaced(tmp_path: Path) -> None:
    from tuner.dataset import PROVENANCE, write_dataset

    demo = generate_demo(tmp_path / "kb", 0)
    assert (tmp_path / "kb" / PROVENANCE).is_file()
    corpus = [{"doc_id": "d", "text": "Returns are accepted within 30 days."}]
    golden = [{"id": "q", "question": "How long for returns?", "ground_truth": "30 days", "keypoints": ["30 days"],
               "relevant_doc_ids": ["d"]}]
    assert write_dataset(demo.path, corpus, golden, [], force=True).provenance is None
    assert not (tmp_path / "kb" / PROVENANCE).exists()
