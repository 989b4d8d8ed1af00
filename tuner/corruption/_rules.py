"""Conflicts (dataset → **corruption** → dataset): the four rule-based corruptors of the taxonomy, offline and
deterministic for a given ``rng``."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tuner.corruption._base import CaseFacts, CorruptedDoc
from tuner.corruption._perturb import PLAUSIBLE, TYPO, perturb_value, perturb_values, swap_entity
from tuner.corruption._script import Script, script_of
from tuner.corruption._text import AnswerSpan, Span, answer_spans, apply_edits, contains_any, sentence_spans
from tuner.dataset import Document

Edit = tuple[int, int, str]

_ATTEMPTS = 8
"""Fresh draws before giving up on a document, for when a wrong value happens to contain the right one."""

_ARTICLE_BEFORE = re.compile(r"(?:^|(?<=\s))(?:a|an|A|An) $")


def _aliases(span: AnswerSpan, facts: CaseFacts) -> list[str]:
    return [alias for index in sorted(span.keypoints) for alias in facts.keypoints[index]]


def _targets(text: str, facts: CaseFacts, values: list[Span], script: Script) -> list[AnswerSpan]:
    """The answer spans; without any, every value; without values, every name."""
    answers = answer_spans(text, facts.keypoints, values)
    fallback = values or script.find_entities(text, values)
    return answers or [AnswerSpan(span.start, span.end, frozenset()) for span in fallback]


def _dedupe(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _containing(sentences: list[tuple[int, int]], position: int) -> tuple[int, int]:
    return next(s for s in sentences if s[0] <= position < s[1])


def _rebuild(text: str, sentences: list[tuple[int, int]], edits: list[Edit], severity: str | None, script: Script) -> str:
    """Apply ``edits``; with a ``severity``, frame each edited sentence as an explicit contradiction.

    In a cased script the framed sentence's first word is lowercased unless it is a name or was itself edited.
    """
    names = {span.start for span in script.find_entities(text, script.find_values(text))}
    pieces: list[str] = []
    cursor = 0
    for start, end in sentences:
        inner = [(a - start, b - start, new) for a, b, new in edits if start <= a < end]
        sentence = apply_edits(text[start:end], inner)
        if inner and severity is not None:
            keep_case = not script.cased or start in names or any(a == 0 for a, _, _ in inner)
            sentence = _frame(sentence, severity, script, lowercase=not keep_case)
        pieces += [text[cursor:start], sentence]
        cursor = end
    return "".join(pieces) + text[cursor:]


def _frame(sentence: str, severity: str, script: Script, lowercase: bool) -> str:
    prefix, suffix = script.frames[severity]
    first = sentence.split(" ", 1)[0]
    if lowercase and first[:1].isupper() and first[1:] == first[1:].lower():
        sentence = sentence[0].lower() + sentence[1:]
    if suffix and not sentence.rstrip().endswith(tuple(script.stops)):
        sentence = sentence.rstrip() + script.stops[0]
    return prefix + sentence + suffix


def _rewrite_answers(document: Document, facts: CaseFacts, severity: str, rng: random.Random, framed: bool) -> CorruptedDoc | None:
    """Put a plausible wrong value where each answer is; negate the verb of answers that are statements."""
    text = document.text
    script = script_of(text)
    values = script.find_values(text)
    targets = _targets(text, facts, values, script)
    sentences = sentence_spans(text, targets)
    for _ in range(_ATTEMPTS):
        chosen: dict[str, str | None] = {}
        edits: list[Edit] = []
        wrong: list[str] = []
        displaced: list[str] = []
        statements: list[AnswerSpan] = []
        for target in targets:
            original = text[target.start : target.end]
            aliases = _aliases(target, facts)
            if original.lower() not in chosen:
                chosen[original.lower()] = _wrong_value(original, aliases, facts, severity, rng, script)
            new = chosen[original.lower()]
            if new is None:
                statements.append(target)
                continue
            edits.append((target.start, target.end, new))
            wrong.append(new)
            displaced += aliases
        for target in statements:
            start, end = _containing(sentences, target.start)
            edit = script.negation(text[start:end], target.start - start, target.end - start)
            if edit is None:
                continue
            verb_start, verb_end, negated = edit[0] + start, edit[1] + start, edit[2]
            if any(verb_start < b and a < verb_end for a, b, _ in edits):
                continue
            edits.append((verb_start, verb_end, negated))
            low, high = min(verb_start, target.start), max(verb_end, target.end)
            wrong.append(text[low:verb_start] + negated + text[verb_end:high])
        if not edits:
            return None
        corrupted = _rebuild(text, sentences, edits, severity if framed else None, script)
        if not contains_any(corrupted, displaced) and all(w in corrupted for w in wrong):
            return CorruptedDoc(corrupted, _dedupe(wrong))
    return None


def _wrong_value(
    original: str, aliases: list[str], facts: CaseFacts, severity: str, rng: random.Random, script: Script
) -> str | None:
    """A wrong value of the same type, or ``None`` for a statement (which gets negated instead)."""
    if script.find_values(original):
        return perturb_values(original, PLAUSIBLE, severity, rng, script.find_values)
    if not aliases or script.is_name(aliases):
        return swap_entity(original, facts.entities, severity, rng, avoid=aliases)
    return None


@dataclass(frozen=True)
class FactualCorruption:
    """A plausible wrong answer replaces the right one; structure and tone are kept."""

    kind: str = "factual_corruption"

    def corrupt(self, document: Document, facts: CaseFacts, severity: str, rng: random.Random) -> CorruptedDoc | None:
        return _rewrite_answers(document, facts, severity, rng, framed=False)


@dataclass(frozen=True)
class ContradictionInjection:
    """The wrong answer is asserted outright: "Contrary to earlier reports, X is Y"."""

    kind: str = "contradiction_injection"

    def corrupt(self, document: Document, facts: CaseFacts, severity: str, rng: random.Random) -> CorruptedDoc | None:
        return _rewrite_answers(document, facts, severity, rng, framed=True)


@dataclass(frozen=True)
class NumericTypo:
    """Every number, amount, percentage and date is garbled; names and statements are untouched.

    ``wrong_values`` are the rewritten answer spans that hold numbers (every garbled value when the
    document answers no keypoint).
    """

    kind: str = "numeric_typo"

    def corrupt(self, document: Document, facts: CaseFacts, severity: str, rng: random.Random) -> CorruptedDoc | None:
        text = document.text
        values = script_of(text).find_values(text)
        if not values:
            return None
        answers = [a for a in answer_spans(text, facts.keypoints, values) if any(a.start <= v.start < a.end for v in values)]
        displaced = [alias for answer in answers for alias in _aliases(answer, facts)]
        for _ in range(_ATTEMPTS):
            chosen: dict[str, str] = {}
            edits: list[Edit] = []
            for value in values:
                original = text[value.start : value.end]
                if original not in chosen:
                    chosen[original] = perturb_value(original, value.kind, TYPO, severity, rng)
                edits.append((value.start, value.end, chosen[original]))
            corrupted = apply_edits(text, edits)
            wrong = [
                apply_edits(text[a.start : a.end], [(s - a.start, e - a.start, new) for s, e, new in edits if a.start <= s < a.end])
                for a in answers
            ] or [new for _, _, new in edits]
            if not contains_any(corrupted, displaced):
                return CorruptedDoc(corrupted, _dedupe(wrong))
        return None


@dataclass(frozen=True)
class RelevancePoisoning:
    """On-topic filler: the document's names stay, the answer-bearing facts go; asserts nothing wrong.

    subtle: answer values become vague ("an unspecified amount"), statement sentences are dropped;
    moderate: answer-bearing sentences are dropped and a pointer sentence names the entities;
    obvious: the whole text is generic filler about the entities.
    """

    kind: str = "relevance_poisoning"

    def corrupt(self, document: Document, facts: CaseFacts, severity: str, rng: random.Random) -> CorruptedDoc | None:
        text = document.text
        script = script_of(text)
        values = script.find_values(text)
        answers = answer_spans(text, facts.keypoints, values) or [AnswerSpan(v.start, v.end, frozenset()) for v in values]
        if not answers and severity != "obvious":
            return None
        withheld = [alias for answer in answers for alias in _aliases(answer, facts)]
        sentences = sentence_spans(text, answers)
        bearing = {s for s in sentences if any(s[0] <= a.start < s[1] for a in answers)}
        body: list[str] = []
        if severity != "obvious":
            for sentence in sentences:
                if sentence not in bearing:
                    body.append(text[sentence[0] : sentence[1]])
                elif severity == "subtle":
                    vague = _vague_sentence(text, sentence, answers, values, facts, script)
                    body += [vague] if vague is not None else []
        subjects = _subjects(document, values, answers, withheld, script)
        corrupted = script.separator.join(body + _filler(subjects, script.separator.join(body), severity, script))
        if corrupted == text or not corrupted.strip() or contains_any(corrupted, withheld):
            return None
        return CorruptedDoc(corrupted)


def _vague_sentence(
    text: str, sentence: tuple[int, int], answers: list[AnswerSpan], values: list[Span], facts: CaseFacts, script: Script
) -> str | None:
    """The sentence with each answer value replaced by a vague phrase; ``None`` if an answer is a statement."""
    start, end = sentence
    edits: list[Edit] = []
    for answer in (a for a in answers if start <= a.start < end):
        inner = [v for v in values if answer.start <= v.start < answer.end]
        aliases = _aliases(answer, facts)
        if inner:
            edits += [(v.start, v.end, script.vague[v.kind]) for v in inner]
        elif script.is_name(aliases):
            edits.append((answer.start, answer.end, script.vague["entity"]))
        else:
            return None
    local = text[start:end]
    shifted: list[Edit] = []
    for a, b, phrase in edits:
        article = _ARTICLE_BEFORE.search(local[: a - start])
        if article is not None and phrase.startswith("a"):
            a = start + article.start()
        if a == start:
            phrase = phrase[0].upper() + phrase[1:]
        shifted.append((a - start, b - start, phrase))
    return apply_edits(local, shifted)


def _subjects(document: Document, values: list[Span], answers: list[AnswerSpan], withheld: list[str], script: Script) -> list[str]:
    """Names the filler must keep mentioning: the document's entities that are not answers (else its title)."""
    text = document.text
    names = [
        text[e.start : e.end]
        for e in script.find_entities(text, values)
        if not any(e.start < a.end and a.start < e.end for a in answers)
    ]
    names = [n for n in _dedupe(names) if not contains_any(n, withheld)]
    names = [n for n in names if not any(n != other and n in other for other in names)]
    if not names and document.title and not contains_any(document.title, withheld):
        names = [document.title]
    return names[:6]


def _filler(subjects: list[str], body: str, severity: str, script: Script) -> list[str]:
    names = subjects or [script.no_subject]
    if severity == "obvious":
        first = names[0]
        return [line.format(all=script.join(names), first=first, First=first[0].upper() + first[1:]) for line in script.filler]
    missing = [n for n in subjects if n not in body] if severity == "subtle" else subjects
    return [script.more.format(all=script.join(missing))] if missing else []
