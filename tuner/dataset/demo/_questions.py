"""Demo (dataset → **demo**): golden questions for the demo: single-hop, multi-hop (two documents) and long-tail, with
stale wrong answers."""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from tuner.dataset.demo._docs import DocSpec, Fact, cap
from tuner.dataset.demo._language import Language
from tuner.dataset.demo._values import distinct

SINGLE, MULTI, LONG_TAIL = 100, 40, 40
STALE_LAG = 0.6
SHORT_REF_SHARE = 0.5


def _answer(spec: DocSpec, fact: Fact) -> str:
    return cap(fact.attr.sentence.format(s=spec.subject, v=fact.value.text))


def _wrong(spec: DocSpec, fact: Fact) -> list[str]:
    return [value.text for value in spec.stale_values(fact.attr.key)]


def _ref(rng: random.Random, spec: DocSpec) -> str:
    return spec.short if spec.short and rng.random() < SHORT_REF_SHARE else spec.ref


def _question(rng: random.Random, lang: Language, specs: list[tuple[DocSpec, Fact]]) -> str:
    p = lang.phrasing
    if len(specs) == 1:
        (spec, fact), = specs
        return p.question_one.format(label=fact.attr.label, ask=fact.attr.ask, ref=_ref(rng, spec))
    (a, fa), (b, fb) = specs
    ref_a = _ref(rng, a)
    ref_b = _ref(rng, b)
    if fa.attr.label == fb.attr.label:
        return p.question_same.format(label=fa.attr.label, ask=fa.attr.ask, ref_a=ref_a, ref_b=ref_b)
    return p.question_two.format(label_a=fa.attr.label, ask_a=fa.attr.ask, ref_a=ref_a, label_b=fb.attr.label, ask_b=fb.attr.ask, ref_b=ref_b)


def _case(rng: random.Random, lang: Language, specs: list[tuple[DocSpec, Fact]], category: str, difficulty: str) -> dict[str, Any]:
    record: dict[str, Any] = {
        "question": _question(rng, lang, specs),
        "ground_truth": lang.phrasing.join.join(_answer(s, f) for s, f in specs),
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


def _stale_first(rng: random.Random, specs: list[DocSpec]) -> list[DocSpec]:
    """``specs`` shuffled, documents with older editions mostly ahead: the golden set over-samples the
    facts that conflicts can contradict, as a regression set keeps its known-risky cases."""
    keyed = [(rng.random() + (0.0 if s.editions else STALE_LAG), s.doc_id, s) for s in specs]
    return [s for _key, _id, s in sorted(keyed)]


def make_golden(rng: random.Random, lang: Language, specs: list[DocSpec]) -> list[dict[str, Any]]:
    """About 180 questions; each (document, fact) is asked about at most once."""
    used: set[tuple[str, str]] = set()
    cases: list[dict[str, Any]] = []

    def fresh(spec: DocSpec) -> list[Fact]:
        return [f for f in spec.facts if (spec.doc_id, f.attr.key) not in used]

    def pick(spec: DocSpec, facts: list[Fact]) -> Fact:
        # Favor facts a stale version contradicts: those are the questions where conflicts can mislead.
        changed = [f for f in facts if spec.stale_values(f.attr.key)]
        return rng.choice(changed) if changed and rng.random() < 0.8 else rng.choice(facts)

    def take(picked: list[tuple[DocSpec, Fact]], category: str, difficulty: str) -> None:
        used.update((s.doc_id, f.attr.key) for s, f in picked)
        cases.append(_case(rng, lang, picked, category, difficulty))

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

    rare = _stale_first(rng, [s for s in specs if s.long or s.kind in ("partner", "store")])
    for spec in rare * 2:
        if sum(c["category"] == "long_tail" for c in cases) >= LONG_TAIL:
            break
        facts = fresh(spec)
        if facts:
            fact = facts[-1] if spec.long else pick(spec, facts)
            take([(spec, fact)], "long_tail", "hard" if spec.long else "medium")

    common = _stale_first(rng, [s for s in specs if not s.long and s.kind not in ("partner", "store")])
    for spec in common:
        if sum(c["category"] == "single_hop" for c in cases) >= SINGLE:
            break
        facts = fresh(spec)
        if facts:
            fact = pick(spec, facts)
            tricky = spec.kind == "product" or bool(spec.stale_values(fact.attr.key))
            take([(spec, fact)], "single_hop", "medium" if tricky else "easy")

    return [{"id": f"q{index:03d}", **case} for index, case in enumerate(cases, start=1)]
