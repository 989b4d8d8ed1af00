"""Conflicts (dataset → **corruption** → dataset): corrupting a dataset: which documents, which random streams, and the
records of conflicts.jsonl."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tuner.errors import CorruptionFailed
from tuner.corruption._base import CaseFacts, Corruptor
from tuner.corruption._script import ENGLISH, script_of
from tuner.corruption._text import Span
from tuner.dataset import Conflict, Dataset
from tuner.io import jsonl_text, line_safe_json, parse_jsonl_line


NOTHING_TO_CORRUPT = "nothing to corrupt"


@dataclass(frozen=True)
class CorruptionRun:
    """The conflicts made, and each ``(doc_id, kind, severity, reason)`` that produced none."""

    conflicts: tuple[Conflict, ...]
    skipped: tuple[tuple[str, str, str, str], ...] = ()

    def counts(self) -> Counter[tuple[str, str]]:
        return Counter((c.kind, c.severity) for c in self.conflicts)


def corpus_entities(dataset: Dataset) -> tuple[str, ...]:
    """Every name in the corpus plus keypoint aliases that are names (capitalized, or short Chinese
    terms), without values: the pool that entity swaps draw from."""
    names = [doc.text[e.start : e.end] for doc in dataset.corpus for e in _entities(doc.text)]
    names += [alias for case in dataset.golden for keypoint in case.keypoints for alias in keypoint if _is_name_alias(alias)]
    return tuple(dict.fromkeys(names))


def _entities(text: str) -> list[Span]:
    script = script_of(text)
    return script.find_entities(text, script.find_values(text))


def _is_name_alias(alias: str) -> bool:
    script = script_of(alias)
    if script.find_values(alias):
        return False
    return alias[:1].isupper() or script is not ENGLISH and script.is_name([alias])


def relevant_facts(dataset: Dataset) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Relevant doc id -> keypoints of every golden case that lists it, in golden-file order."""
    facts: dict[str, dict[tuple[str, ...], None]] = {}
    for case in dataset.golden:
        for doc_id in case.relevant_doc_ids:
            facts.setdefault(doc_id, {}).update(dict.fromkeys(case.keypoints))
    return {doc_id: tuple(keypoints) for doc_id, keypoints in facts.items()}


def conflict_id(doc_id: str, kind: str, severity: str) -> str:
    return f"{doc_id}__{kind}__{severity}"


def corrupt_dataset(
    dataset: Dataset,
    corruptors: Mapping[str, Corruptor],
    severities: Sequence[str],
    seed: int = 0,
    max_docs: int | None = None,
    concurrency: int = 1,
) -> CorruptionRun:
    """Corrupt each relevant document once per corruptor × severity.

    Each conflict draws from its own stream seeded by ``(seed, doc_id, kind, severity)``, so a
    conflict does not change when other types, severities or documents are added or left out.
    ``max_docs`` keeps a seeded sample of the relevant documents; ``concurrency`` > 1 runs that many
    corruptions at once (for corruptors that wait on a model endpoint).
    """
    facts = relevant_facts(dataset)
    doc_ids = list(facts)
    if max_docs is not None and max_docs < len(doc_ids):
        sample = set(random.Random(f"{seed}:documents").sample(doc_ids, max_docs))
        doc_ids = [doc_id for doc_id in doc_ids if doc_id in sample]
    documents = {doc.doc_id: doc for doc in dataset.corpus}
    entities = corpus_entities(dataset)

    def corrupt_one(job: tuple[str, str, str]) -> Conflict | str:
        doc_id, kind, severity = job
        document = documents[doc_id]
        rng = random.Random(f"{seed}:{doc_id}:{kind}:{severity}")
        try:
            result = corruptors[kind].corrupt(document, CaseFacts(facts[doc_id], entities), severity, rng)
        except CorruptionFailed as exc:
            return str(exc)
        if result is None:
            return NOTHING_TO_CORRUPT
        return Conflict(
            doc_id=conflict_id(doc_id, kind, severity),
            text=result.text,
            conflicts_with=doc_id,
            kind=kind,
            severity=severity,
            wrong_values=result.wrong_values,
            title=document.title,
        )

    jobs = [(doc_id, kind, severity) for doc_id in doc_ids for kind in corruptors for severity in severities]
    if concurrency > 1:
        from tuner.llm import map_concurrent

        outcomes = map_concurrent(corrupt_one, jobs, concurrency)
    else:
        outcomes = [corrupt_one(job) for job in jobs]
    conflicts = tuple(o for o in outcomes if isinstance(o, Conflict))
    skipped = tuple((*job, o) for job, o in zip(jobs, outcomes) if isinstance(o, str))
    return CorruptionRun(conflicts, skipped)


def conflict_record(conflict: Conflict) -> dict[str, Any]:
    """The conflicts.jsonl record of ``conflict`` (``title`` and ``metadata`` only when there are some)."""
    record: dict[str, Any] = {
        "doc_id": conflict.doc_id,
        "text": conflict.text,
        "conflicts_with": conflict.conflicts_with,
        "kind": conflict.kind,
        "severity": conflict.severity,
        "wrong_values": list(conflict.wrong_values),
    }
    if conflict.title:
        record["title"] = conflict.title
    if conflict.metadata:
        record["metadata"] = conflict.metadata
    return record


def conflicts_jsonl(conflicts: Sequence[Conflict]) -> str:
    return jsonl_text(conflict_record(c) for c in conflicts)


def value_type(text: str) -> str:
    """date, money, percent or number (its first value), else name (capitalized, or a short Chinese term), else statement."""
    script = script_of(text)
    values = script.find_values(text)
    if values:
        return values[0].kind
    return "name" if script.is_name([text]) else "statement"


def wrong_answers_by_case(dataset: Dataset, conflicts: Sequence[Conflict]) -> dict[str, tuple[str, ...]]:
    """Case id -> wrong values, from the conflicts of its relevant documents, that could answer it.

    A wrong value counts for a case when it has the type of one of the case's keypoints (a wrong
    date is not a wrong price, though both sit in the same document), and is not already listed.
    One found inside a keypoint alias or the ground truth is left out: a right answer would
    otherwise count as misled.
    """
    additions: dict[str, tuple[str, ...]] = {}
    for case in dataset.golden:
        relevant = set(case.relevant_doc_ids)
        aliases = [alias for keypoint in case.keypoints for alias in keypoint]
        types = {value_type(alias) for alias in aliases}
        right = [alias.lower() for alias in aliases] + [case.ground_truth.lower()]
        known = {w.lower() for w in case.wrong_answers}
        new = [
            value
            for conflict in conflicts
            if conflict.conflicts_with in relevant
            for value in conflict.wrong_values
            if value_type(value) in types and value.lower() not in known and not any(value.lower() in r for r in right)
        ]
        if new:
            additions[case.id] = tuple(dict.fromkeys(new))
    return additions


def with_wrong_answers(golden_text: str, additions: Mapping[str, Sequence[str]]) -> str:
    """golden.jsonl text with ``additions`` appended to the cases' ``wrong_answers``; other lines stay byte-identical."""
    lines = golden_text.split("\n")
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        record = parse_jsonl_line(line, first=number == 0)
        if record["id"] in additions:
            record["wrong_answers"] = list(record.get("wrong_answers", [])) + list(additions[record["id"]])
            lines[number] = line_safe_json(record)
    return "\n".join(lines)
