"""`tuner golden conflicts` on large documents (issue 54 §2.14): the sentence matching finds what comparing every
sentence with every sentence found, with work bounded by the sentences (not their square), and shows progress."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from tuner.dataset import Dataset, Document
from tuner.golden import SENTENCE_MATCH, find_conflicts
from tuner.golden._conflicts import MATCH_CANDIDATES, _disagreements, _Sentence, _sentences, _SentenceIndex

WORDS = [a + b for a in ("ka", "lo", "mi", "nu", "pe", "ro", "su", "ti") for b in ("dan", "fel", "gor", "hum", "lis", "mot", "ver")]
WORDS += ["warranty", "battery", "price", "shipping", "refund", "保修", "电池"]


def _all_pairs(mine: Sequence[_Sentence], theirs: Sequence[_Sentence]) -> tuple[list[str], list[str]]:
    """The matching before the index (9fe7f21): each sentence against every sentence of the other document."""
    left: dict[str, None] = {}
    right: dict[str, None] = {}
    for sentence in mine:
        if not sentence.values or not sentence.terms:
            continue
        best, score = None, 0.0
        for other in theirs:
            union = sentence.terms | other.terms
            jaccard = len(sentence.terms & other.terms) / len(union) if union else 0.0
            if jaccard > score:
                best, score = other.values, jaccard
        if best is None or score < SENTENCE_MATCH:
            continue
        own, their = sentence.values - best, best - sentence.values
        if own and their:
            left.update(dict.fromkeys(sorted(own)))
            right.update(dict.fromkeys(sorted(their)))
    return list(left), list(right)


def _text(rng: random.Random, sentences: int, vocabulary: Sequence[str]) -> str:
    """Sentences of 2–12 words of ``vocabulary`` and a value each (a number, a year or a name)."""
    values = [lambda: str(rng.randint(1, 999)), lambda: f"in {rng.randint(1990, 2030)}", lambda: rng.choice(["Anna Berg", "John Smith"])]
    return " ".join("The " + " ".join(rng.choices(vocabulary, k=rng.randint(2, 12))) + f" {rng.choice(values)()}."
                    for _ in range(sentences))


@pytest.mark.parametrize("seed", range(6))
def test_the_index_finds_what_comparing_every_pair_found(seed: int) -> None:
    rng = random.Random(seed)
    vocabulary = WORDS[: rng.choice([8, 20, len(WORDS)])]  # few words: many ties and equal sizes
    a, b = _text(rng, 150, vocabulary), _text(rng, 150, vocabulary)
    b = " ".join([b, a[: len(a) // 3]])  # and copies of sentences of the other, whose values sometimes differ
    mine, theirs = _sentences(a), _sentences(b)
    index = _SentenceIndex(theirs)
    assert _disagreements(mine, index) == _all_pairs(mine, theirs)
    assert _disagreements(theirs, _SentenceIndex(mine)) == _all_pairs(theirs, mine)
    assert index.compared < len(mine) * len(theirs)


def test_the_work_is_bounded_by_the_sentences_not_their_square() -> None:
    rng = random.Random(54)
    template = _text(rng, 2000, WORDS[:10])  # few words, so nearly every sentence shares some with every other
    other = _text(random.Random(55), 2000, WORDS[:10])
    mine, theirs = _sentences(template), _sentences(other)
    index = _SentenceIndex(theirs)
    _disagreements(mine, index)
    assert 0 < index.compared <= MATCH_CANDIDATES * len(mine) < len(mine) * len(theirs) / 3
    copy = _SentenceIndex(_sentences(template.replace(" 7", " 8")))  # a version: every context is in the other
    _disagreements(mine, copy)
    assert copy.compared == 0


class _Recorder:
    def __init__(self) -> None:
        self.tasks: list[tuple[str, int, list[int]]] = []

    def stage(self, message: str) -> None:
        return None

    @contextmanager
    def task(self, description: str, total: int) -> Iterator[object]:
        advanced: list[int] = []
        self.tasks.append((description, total, advanced))

        class _Task:
            def advance(self, amount: int = 1) -> None:
                advanced.append(amount)

        yield _Task()


def test_comparing_the_pairs_shows_progress(tmp_path: Path) -> None:
    rng = random.Random(3)
    text = _text(rng, 40, WORDS)
    docs = tuple(Document(f"d{n}", text.replace(" 1", f" {n}1"), "", {"family": "f"}) for n in range(3))
    reporter = _Recorder()
    found = find_conflicts(Dataset(tmp_path, docs, ()), near_duplicates=False, reporter=reporter)
    assert found and reporter.tasks == [("comparing the sentences of candidate pairs", 3, [1, 1, 1])]


def test_the_command_says_how_far_it_got(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without ``--similar`` or ``--questions`` the command showed nothing while it compared (180 s and more on three
    similar 1 MB documents); a log, where the bar is hidden, now gets the pairs compared."""
    import json

    from tuner.cli import main

    text = _text(random.Random(4), 30, WORDS)
    rows = [{"doc_id": f"d{n}", "text": text.replace(" 1", f" {n}1"), "metadata": {"family": "f"}} for n in range(3)]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["golden", "conflicts", str(tmp_path)]) == 0
    assert "comparing the sentences of candidate pairs: 3 of 3 done" in capsys.readouterr().err
