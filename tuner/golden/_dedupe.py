"""Golden set (dataset → **golden drafts**): normalized questions and their near-duplicate groups (MinHash over character
n-grams, so Chinese questions, which have no spaces, are compared as well as English ones)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from tuner.text import CJK_CHARS, DIGITS, cjk_share, normalize_text

NEAR_DUPLICATE = 0.7
"""Default estimated Jaccard similarity of character n-gram sets above which two questions are one question."""
_PERMUTATIONS = 128
_SPACE = re.compile(r"\s+")
_EDGE_PUNCTUATION = " ?？!！.。,，;；:：'\"“”‘’"

if TYPE_CHECKING:
    from datasketch import MinHash


def normalize_question(text: str) -> str:
    """:func:`tuner.text.normalize_text` (NFKC, so full-width letters and digits fold to ASCII, then lower case),
    runs of whitespace collapsed to one space and punctuation trimmed at both ends: ``"  Ｗｈａｔ is  X？"`` and
    ``"what is x"`` are the same question.

    >>> normalize_question("  Ｗｈａｔ is  X？")
    'what is x'
    """
    return _SPACE.sub(" ", normalize_text(text)).strip(_EDGE_PUNCTUATION)


def shingles(text: str) -> set[str]:
    """Character n-grams of a normalized question without spaces: bigrams when most letters are CJK (a Chinese
    word is one or two characters), trigrams otherwise; a text shorter than n is its own single shingle.

    >>> sorted(shingles("如何退款"))
    ['何退', '如何', '退款']
    """
    compact = text.replace(" ", "")
    n = 2 if cjk_share(compact) > 0.5 else 3
    if len(compact) <= n:
        return {compact}
    return {compact[i:i + n] for i in range(len(compact) - n + 1)}


_NUMERALS = frozenset("0123456789十百千万亿") | frozenset(DIGITS)
_NEGATIONS = frozenset("不没无非未别")
_CJK = re.compile(f"[{CJK_CHARS}]")
_IGNORED = re.compile(r"[\W_]+")


def same_wording(a: str, b: str) -> bool:
    """True when ``b`` is ``a`` with typo-sized edits only: once spaces and punctuation are dropped, every differing
    stretch of the two texts is at most one character on each side, holds no numeral (Arabic or Chinese) and no Chinese
    negation (不, 没, …), and no Chinese character is replaced by another (one character is a word there: 冬季 / 夏季);
    a Chinese character may be added or left out (要 / 需要).

    This is the guard behind the MinHash test: templated questions share most characters but not the name or the
    number they ask about (``五月艾生长的地区海拔…`` / ``锦地罗生长的地区海拔…``, ``X200`` / ``X210``), and they are
    different questions; ``cost`` / ``costs``, ``要`` / ``需要``, ``warranty`` / ``warrenty`` are one.

    >>> same_wording("how much does the x200 laptop costs", "how much does the x200 laptop cost")
    True
    >>> same_wording("五月艾所生长的地区海拔约是多少米", "锦地罗生长的地区海拔约是多少米"), same_wording("x200 price", "x210 price")
    (False, False)
    >>> same_wording("冬季固件更新多大", "夏季固件更新多大"), same_wording("顺丰次日达要加多少运费", "顺丰次日达需要加多少运费")
    (False, True)
    """
    left, right = _IGNORED.sub("", a), _IGNORED.sub("", b)
    for op, i1, i2, j1, j2 in SequenceMatcher(None, left, right, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        changed = left[i1:i2] + right[j1:j2]
        if i2 - i1 > 1 or j2 - j1 > 1 or any(char in _NUMERALS or char in _NEGATIONS for char in changed):
            return False
        if op == "replace" and _CJK.search(changed):  # one Chinese character is a word: 冬季 / 夏季
            return False
    return True


def _minhash(text: str) -> MinHash:
    from datasketch import MinHash  # imported on use: datasketch loads scipy.integrate, which `tuner run` never needs

    signature = MinHash(num_perm=_PERMUTATIONS, seed=1)
    for gram in shingles(text):
        signature.update(gram.encode("utf-8"))
    return signature


def near_duplicate_groups(texts: Sequence[str], threshold: float = NEAR_DUPLICATE) -> list[int]:
    """For each normalized text, the index of the first text of its group: texts whose estimated Jaccard
    similarity of :func:`shingles` reaches ``threshold`` and that differ by typo-sized edits only (:func:`same_wording`) are joined, transitively (union-find over MinHash LSH
    candidates; each candidate pair is confirmed on the signatures, so LSH's banding only decides what gets
    compared). Identical texts are always one group."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=_PERMUTATIONS)
    signatures = [_minhash(text) for text in texts]
    parent = list(range(len(texts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for index, (text, signature) in enumerate(zip(texts, signatures)):
        if text in first:
            parent[index] = first[text]
            continue
        first[text] = index
        for other in lsh.query(signature):
            if signature.jaccard(signatures[other]) >= threshold and same_wording(text, texts[other]):
                a, b = root(index), root(other)
                parent[max(a, b)] = min(a, b)
        lsh.insert(index, signature)
    return [root(i) for i in range(len(texts))]


def question_groups(questions: Sequence[str], threshold: float = NEAR_DUPLICATE) -> list[int]:
    """For each question, the index of the first question of its group: exact duplicates once normalized
    (:func:`normalize_question`) and near duplicates (:func:`near_duplicate_groups`) are one group. What keeps a
    question and its copy on one side of a confirmation split, and what ``tuner validate`` lists.

    >>> question_groups(["What is X?", "what is x", "退款要多久才能到账户里", "退款需要多久才能到账户里", "How much is Y?"])
    [0, 0, 2, 2, 4]
    """
    return near_duplicate_groups([normalize_question(q) for q in questions], threshold)


class NearDuplicateIndex:
    """Texts added one at a time; :meth:`match` names an earlier text that ``text`` nearly duplicates (the same test as
    :func:`near_duplicate_groups`, against each earlier text rather than its group)."""

    def __init__(self, threshold: float = NEAR_DUPLICATE) -> None:
        from datasketch import MinHashLSH

        self.threshold = threshold
        self._lsh = MinHashLSH(threshold=threshold, num_perm=_PERMUTATIONS)
        self._signatures: list[MinHash] = []
        self._order: list[str] = []
        self._texts: dict[str, int] = {}

    def match(self, text: str) -> int | None:
        if text in self._texts:
            return self._texts[text]
        signature = _minhash(text)
        hits = [i for i in self._lsh.query(signature)
                if signature.jaccard(self._signatures[i]) >= self.threshold and same_wording(text, self._order[i])]
        return min(hits) if hits else None

    def add(self, text: str) -> int:
        index = len(self._signatures)
        signature = _minhash(text)
        self._signatures.append(signature)
        self._order.append(text)
        self._texts.setdefault(text, index)
        self._lsh.insert(index, signature)
        return index
