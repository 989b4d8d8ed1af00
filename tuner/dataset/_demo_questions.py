"""Golden questions for the demo: single-hop, multi-hop (two documents) and long-tail, with stale wrong answers."""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from tuner.dataset._demo_docs import DocSpec, Fact
from tuner.dataset._demo_values import distinct

SINGLE, MULTI, LONG_TAIL = 100, 40, 40


def _answer(spec: DocSpec, fact: Fact) -> str:
    sentence = fact.attr.sentence.format(s=spec.subject, v=fact.value.text)
    return sentence[0].upper() + sentence[1:]


def _wrong(spec: DocSpec, fact: Fact) -> list[str]:
    stale = spec.stale.get(fact.attr.key)
    return [stale.text] if stale is not None else []


def _case(specs: list[tuple[DocSpec, Fact]], category: str, difficulty: str) -> dict[str, Any]:
    if len(specs) == 1:
        (spec, fact), = specs
        question = f"What is the {fact.attr.label} of {spec.ref}?"
    else:
        (a, fa), (b, fb) = specs
        if fa.attr.label == fb.attr.label:
            question = f"What is the {fa.attr.label} of {a.ref} and of {b.ref}?"
        else:
            question = f"What is the {fa.attr.label} of {a.ref}, and what is the {fb.attr.label} of {b.ref}?"
    record: dict[str, Any] = {
        "question": question,
        "ground_truth": " ".join(_answer(s, f) for s, f in specs),
        "keypoints": [list(f.value.aliases) for _s, f in specs],
        "relevant_doc_ids": [s.doc_id for s, _f in specs],
        "category": category,
        "difficulty": difficulty,
    }
    aliases = [a for _s, f in specs for a in f.value.aliases]
    # A stale value of one document can be the current value of the other one in a multi-hop pair.
    wrong = [w for s, f in specs for w in _wrong(s, f) if not any(w in a or a in w for a in aliases)]
    if wrong:
        record["wrong_answers"] = wrong
    return record


def make_golden(rng: random.Random, specs: list[DocSpec]) -> list[dict[str, Any]]:
    """About 180 questions; each (document, fact) is asked about at most once."""
    used: set[tuple[str, str]] = set()
    cases: list[dict[str, Any]] = []

    def fresh(spec: DocSpec) -> list[Fact]:
        return [f for f in spec.facts if (spec.doc_id, f.attr.key) not in used]

    def pick(spec: DocSpec, facts: list[Fact]) -> Fact:
        # Favor facts a stale version contradicts: those are the questions where conflicts can mislead.
        changed = [f for f in facts if f.attr.key in spec.stale]
        return rng.choice(changed) if changed and rng.random() < 0.8 else rng.choice(facts)

    def take(picked: list[tuple[DocSpec, Fact]], category: str, difficulty: str) -> None:
        used.update((s.doc_id, f.attr.key) for s, f in picked)
        cases.append(_case(picked, category, difficulty))

    by_family: dict[tuple[str, str], list[DocSpec]] = defaultdict(list)
    for spec in specs:
        by_family[(spec.kind, spec.family)].append(spec)

    pairs: list[tuple[DocSpec, DocSpec]] = []
    for (kind, _family), group in sorted(by_family.items()):
        if kind in ("product", "policy") and len(group) > 1:
            pairs.extend(zip(group[::2], group[1::2]))
    namesakes = [(p, rng.choice(by_family[("product", p.family)])) for p in specs if p.kind == "partner" and ("product", p.family) in by_family]
    rng.shuffle(pairs)
    for a, b in namesakes + pairs:
        if sum(c["category"] == "multi_hop" for c in cases) >= MULTI:
            break
        same = [(fa, fb) for fa in fresh(a) for fb in fresh(b) if fa.attr.key == fb.attr.key and distinct(fa.value, fb.value)]
        options = same if a.kind == b.kind and same else [(fa, fb) for fa in fresh(a) for fb in fresh(b)]
        if options:
            fa, fb = rng.choice(options)
            take([(a, fa), (b, fb)], "multi_hop", "hard")

    rare = [s for s in specs if s.long or s.kind in ("partner", "store")]
    rng.shuffle(rare)
    for spec in rare * 2:
        if sum(c["category"] == "long_tail" for c in cases) >= LONG_TAIL:
            break
        facts = fresh(spec)
        if facts:
            fact = facts[-1] if spec.long else pick(spec, facts)
            take([(spec, fact)], "long_tail", "hard" if spec.long else "medium")

    common = [s for s in specs if not s.long and s.kind not in ("partner", "store")]
    rng.shuffle(common)
    for spec in common:
        if sum(c["category"] == "single_hop" for c in cases) >= SINGLE:
            break
        facts = fresh(spec)
        if facts:
            fact = pick(spec, facts)
            tricky = spec.kind == "product" or fact.attr.key in spec.stale
            take([(spec, fact)], "single_hop", "medium" if tricky else "easy")

    return [{"id": f"q{index:03d}", **case} for index, case in enumerate(cases, start=1)]
