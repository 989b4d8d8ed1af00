"""Golden set (dataset → **golden drafts**): questions synthesized from the corpus by a chat model, one chunk
(single-hop, long-tail) or two linked chunks (multi-hop) at a time, checked by filters a person can read, resumable."""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import islice
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from tuner.chunking import CORPUS as CORPUS_CHUNK
from tuner.chunking import Chunk
from tuner.dataset import Dataset
from tuner.embedding import CachedEncoder
from tuner.golden._dedupe import NEAR_DUPLICATE, NearDuplicateIndex, normalize_question
from tuner.golden._draft import draft_case
from tuner.golden._keypoints import aliases_found, keypoint_list
from tuner.golden._pool import DEFAULT_DEPTH, POOL_RETRIEVERS, build_pools
from tuner.golden._ask import Spend
from tuner.io import MalformedLine, jsonl_lines, jsonl_text, parse_jsonl_line
from tuner.llm import ChatClient, fill, json_object
from tuner.progress import Reporter, SilentReporter
from tuner.retrieval import RetrievalPipeline
from tuner.settings import settings_from_mapping
from tuner.text import CJK_CHARS, Language, bm25_tokens, detect_language, normalize_text
from tuner.strict import StrictModel

CATEGORIES = ("single_hop", "multi_hop", "long_tail")
DIFFICULTY = {"single_hop": "easy", "long_tail": "medium", "multi_hop": "hard"}
"""Difficulty by construction: one passage, one rare passage, two passages to combine."""
FILTERS = ("unparseable", "keypoint_not_in_source", "answer_in_question", "passage_bound", "near_duplicate", "closed_book")
"""Why a synthesized question is dropped, in the order the checks run."""
PROGRESS = "synth.progress.jsonl"
_SPARE = 4
"""Multi-hop pairs prepared per multi-hop question wanted, for the ones the filters drop."""

PROMPTS: dict[Language, str] = {
    "en": (
        "You write evaluation questions for a question-answering system over a company's knowledge base.\n"
        "Read the {passages_word} below and write ONE question a user could ask that {scope}.\n"
        "Rules:\n"
        "- The question must make sense on its own: never refer to the passage ('according to the passage', "
        "'in the text', 'mentioned above').\n"
        "- The question must not contain its answer.\n"
        "- The answer is short (one sentence at most).\n"
        "- keypoints are the checkable facts of the answer (numbers with units, dates, names); each keypoint is a list of "
        "aliases, and every alias is copied exactly, character for character, from the passages.\n"
        'Reply with only a JSON object: {"question": "...", "answer": "...", "keypoints": [["alias", "..."]]}\n\n'
        "{passages}"
    ),
    "zh": (
        "你在为一个基于企业知识库的问答系统编写评测问题。\n"
        "阅读下面的{passages_word}，写出一个用户可能会问的问题，{scope}。\n"
        "要求：\n"
        "- 问题必须独立成立，不能提到材料本身（不要写“根据材料”“文中”“上述”之类的说法）。\n"
        "- 问题中不能包含答案。\n"
        "- 答案简短（最多一句话）。\n"
        "- keypoints 是答案中可核对的事实（带单位的数字、日期、名称）；每个要点是一组同义表述，每个表述都必须从材料中逐字复制。\n"
        '只回复一个 JSON 对象：{"question": "...", "answer": "...", "keypoints": [["表述", "..."]]}\n\n'
        "{passages}"
    ),
}
_SCOPE = {
    ("en", False): "the passage answers", ("en", True): "needs facts from both passages to answer",
    ("zh", False): "答案可以在材料中找到", ("zh", True): "必须结合两段材料中的事实才能回答",
}
_PASSAGES_WORD = {("en", False): "passage", ("en", True): "two passages", ("zh", False): "材料", ("zh", True): "两段材料"}
_PASSAGE_LABEL = {"en": "PASSAGE {n}", "zh": "材料{n}"}
CLOSED_BOOK: dict[Language, str] = {
    "en": "Answer the question in one short sentence from general knowledge. If you do not know, reply exactly: I don't know.\n"
          "Question: {question}",
    "zh": "请凭常识用一句话简短回答下面的问题。如果不知道，只回答：不知道。\n问题：{question}",
}
PASSAGE_BOUND = re.compile(
    r"\b(?:according to|based on|in|from|per) (?:the|this|these|above) (?:passages?|texts?|documents?|articles?|context|excerpts?|paragraphs?|materials?)\b"
    r"|\b(?:the|this|above) (?:passage|excerpt|paragraph)\b|\bmentioned above\b|\bthe author\b"
    r"|文中|上述|上文|以上|本文|根据材料|根据文章|根据段落|根据文本|材料中|文章中|段落中|这段|该段|此段",
    re.IGNORECASE,
)
"""Wording that only makes sense next to the passage the question was written from."""


class SynthPlan(StrictModel):
    """What ``tuner golden synth`` asks for. ``n`` questions are kept, split over the categories by the shares
    (single-hop takes the rest); sources are taken until each category has its count or runs out of sources.
    ``link_similarity`` is the cosine from which two chunks of different documents are linked for a multi-hop question
    when they share no rare term; ``closed_book`` adds a second call per question, without the passage, and drops the
    question when that answer states every keypoint; ``budget`` stops before a batch of requests once the tokens spent
    in this run reach it; ``concurrency`` is how many requests are in flight at once (see :class:`Synthesizer`)."""

    n: int = Field(100, ge=1)
    multi_hop_share: float = Field(0.3, ge=0.0, le=1.0)
    long_tail_share: float = Field(0.2, ge=0.0, le=1.0)
    link_similarity: float = Field(0.6, ge=0.0, le=1.0)
    near_duplicate: float = Field(NEAR_DUPLICATE, gt=0.0, le=1.0)
    closed_book: bool = False
    budget: int | None = Field(None, ge=1)
    depth: int = Field(DEFAULT_DEPTH, ge=1)
    seed: int = 0
    concurrency: int = Field(1, ge=1, le=64)

    def targets(self) -> dict[str, int]:
        multi = round(self.n * self.multi_hop_share)
        long_tail = min(round(self.n * self.long_tail_share), self.n - multi)
        return {"single_hop": self.n - multi - long_tail, "multi_hop": multi, "long_tail": long_tail}


@dataclass(frozen=True)
class Source:
    """What one request is written from: one chunk, or two linked chunks of different documents (``link``: ``entity:TERM``
    or ``similarity:0.73``)."""

    category: str
    chunks: tuple[Chunk, ...]
    link: str = ""

    @property
    def key(self) -> str:
        return f"{self.category}:{'+'.join(c.chunk_id for c in self.chunks)}"

    @property
    def language(self) -> Language:
        return detect_language(c.text for c in self.chunks)


def synth_prompt(source: Source) -> str:
    """The request for ``source``, in its chunks' language."""
    language, multi = source.language, len(source.chunks) > 1
    passages = "\n\n".join(f"{_PASSAGE_LABEL[language].format(n=i)}:\n{c.passage}" for i, c in enumerate(source.chunks, start=1))
    return fill(PROMPTS[language], passages_word=_PASSAGES_WORD[(language, multi)], scope=_SCOPE[(language, multi)], passages=passages)


_CJK = re.compile(f"[{CJK_CHARS}]")


def estimate_tokens(text: str) -> int:
    """A rough count of a text's tokens for ``--dry-run``: one per CJK character, one per four other characters
    (what common BPE vocabularies give on average); the real counts come from the endpoint's usage."""
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def _family(kb: Dataset) -> dict[str, str]:
    """Per document, its version family (``metadata.family``), else the document itself."""
    return {doc.doc_id: str(doc.metadata.get("family") or doc.doc_id) for doc in kb.corpus}


def spread(chunks: Sequence[Chunk], families: dict[str, str], rng: random.Random) -> list[Chunk]:
    """Every chunk once, ordered so that consecutive picks come from different families and documents: families in a
    seeded order take turns, each giving its documents' chunks in turn (documents and chunks shuffled)."""
    by_family: dict[str, dict[str, list[Chunk]]] = {}
    for chunk in chunks:
        by_family.setdefault(families.get(chunk.doc_id, chunk.doc_id), {}).setdefault(chunk.doc_id, []).append(chunk)
    queues: list[Iterator[Chunk]] = []
    for name in rng.sample(sorted(by_family), len(by_family)):
        documents = [rng.sample(cs, len(cs)) for _, cs in sorted(by_family[name].items())]
        rng.shuffle(documents)
        queues.append(_interleave([iter(chunks_of) for chunks_of in documents]))
    return list(_interleave(queues))


def _interleave(iterators: list[Iterator[Chunk]]) -> Iterator[Chunk]:
    """One item of each iterator in turn, until all are exhausted."""
    active = list(iterators)
    while active:
        still = []
        for iterator in active:
            item = next(iterator, None)
            if item is not None:
                yield item
                still.append(iterator)
        active = still


def plan_sources(kb: Dataset, plan: SynthPlan, encoder: CachedEncoder | None = None, reporter: Reporter | None = None) -> dict[str, list[Source]]:
    """Sources per category over the knowledge base's chunks (default chunking, corpus documents only).

    - ``long_tail``: chunks whose mean term IDF (over all chunks) is in the top quarter: rare facts;
    - ``single_hop``: the other chunks;
    - ``multi_hop``: each chunk with a chunk of another document: the most similar one sharing a rare name (an
      :func:`entity_terms` term of at most 3 chunks: a shared entity), else the most similar one when its cosine reaches ``link_similarity``.

    Each list follows :func:`spread`, so documents and families are covered before any is used twice; multi-hop pairs are
    prepared for the first chunks only (:data:`_SPARE` per multi-hop question wanted)."""
    settings = settings_from_mapping({}, "synthesis settings", kb.model_defaults)
    table = RetrievalPipeline(kb, reporter=reporter or SilentReporter(), encoder=encoder).table(settings)
    chunks = [c for c in table.chunks if c.source == CORPUS_CHUNK]
    index = {c.chunk_id: i for i, c in enumerate(table.chunks)}
    rng = random.Random(plan.seed)
    ordered = spread(chunks, _family(kb), rng)
    terms = [set(bm25_tokens(c.passage)) for c in table.chunks]
    df = Counter(t for ts in terms for t in ts)
    idf = {t: math.log(len(table.chunks) / d) for t, d in df.items()}
    rarity = {c.chunk_id: float(np.mean([idf[t] for t in terms[index[c.chunk_id]]])) if terms[index[c.chunk_id]] else 0.0 for c in chunks}
    cut = float(np.quantile(list(rarity.values()), 0.75)) if len(chunks) >= 4 else math.inf
    sources: dict[str, list[Source]] = {name: [] for name in CATEGORIES}
    for chunk in ordered:
        category = "long_tail" if rarity[chunk.chunk_id] >= cut else "single_hop"
        sources[category].append(Source(category, (chunk,)))
    wanted = plan.targets()["multi_hop"]
    if wanted:
        # linking compares a chunk with every other: only as many pairs as the filters could need
        sources["multi_hop"] = _pairs(ordered, table.chunks, terms, df, table.embeddings(), index, plan.link_similarity,
                                      _SPARE * wanted)
    return sources


_NAME = re.compile(r"\b[A-Z][A-Za-z0-9]*|\b[A-Za-z]+[0-9][A-Za-z0-9]*")


def entity_terms(text: str) -> set[str]:
    """BM25 terms of ``text`` that look like names: Latin words written with a capital or mixing letters and digits
    (``Aurora``, ``X200``), and Chinese words of two characters or more.

    >>> sorted(entity_terms("The Aurora X200 ships from 顺丰仓库 today"))
    ['aurora', 'x200', '仓库', '顺丰']
    """
    latin = {normalize_text(m.group()) for m in _NAME.finditer(text)}
    return {t for t in bm25_tokens(text) if t in latin or (len(t) >= 2 and _CJK.match(t))}


def _pairs(ordered: list[Chunk], every: Sequence[Chunk], terms: list[set[str]], df: Counter[str], vectors: np.ndarray,
           index: dict[str, int], threshold: float, limit: int) -> list[Source]:
    """Up to ``limit`` linked pairs, one per chunk of ``ordered`` that has a partner (see :func:`plan_sources`)."""
    names = [entity_terms(c.passage) & ts for c, ts in zip(every, terms)]
    holders: dict[str, list[int]] = {}
    for i, ts in enumerate(names):
        for t in ts:
            if df[t] <= 3:
                holders.setdefault(t, []).append(i)
    doc_ids = np.array([c.doc_id for c in every], dtype=object)
    corpus = np.array([c.source == CORPUS_CHUNK for c in every], dtype=bool)
    seen: set[frozenset[str]] = set()
    pairs: list[Source] = []
    for chunk in ordered:
        if len(pairs) >= limit:
            break
        i = index[chunk.chunk_id]
        similarity = np.where((doc_ids != chunk.doc_id) & corpus, vectors @ vectors[i], -np.inf)
        shared: dict[int, str] = {}
        for t in sorted(names[i], key=lambda term: (len(term), term)):  # the longest shared name is the one shown
            shared.update((j, t) for j in holders.get(t, []) if np.isfinite(similarity[j]))
        if shared:
            j = max(shared, key=lambda k: float(similarity[k]))
            link = f"entity:{shared[j]}"
        else:
            j = int(np.argmax(similarity))
            if not similarity[j] >= threshold:
                continue
            link = f"similarity:{similarity[j]:.2f}"
        pair = frozenset((chunk.chunk_id, every[j].chunk_id))
        if pair not in seen:
            seen.add(pair)
            pairs.append(Source("multi_hop", (chunk, every[j]), link))
    return pairs


def parse_synthesis(reply: str) -> tuple[str, str, list[list[str]]] | None:
    """``(question, answer, keypoints)`` from a reply holding one JSON object; ``None`` when absent or mistyped. A
    keypoint given as one string is one alias."""
    payload = json_object(reply)
    if payload is None:
        return None
    question, answer, keypoints = payload.get("question"), payload.get("answer"), keypoint_list(payload.get("keypoints", []))
    if not isinstance(question, str) or not question.strip() or not isinstance(answer, str) or keypoints is None:
        return None
    return question.strip(), answer.strip(), keypoints


def verbatim(keypoints: list[list[str]], source_text: str) -> list[list[str]] | None:
    """Each keypoint's aliases that occur in the source (compared after :func:`tuner.text.normalize_text`); ``None``
    when a keypoint has none, or there is no keypoint at all."""
    kept = aliases_found(keypoints, [source_text])
    return kept if kept and all(kept) else None


def answer_in_question(question: str, answer: str, keypoints: list[list[str]]) -> bool:
    """True when the question holds its answer or an alias of one of its keypoints (after normalizing)."""
    normal = normalize_text(question)
    return any(len(text.strip()) >= 2 and normalize_text(text.strip()) in normal for text in [answer, *(a for k in keypoints for a in k)])


def states_every_keypoint(reply: str, keypoints: list[list[str]]) -> bool:
    normal = normalize_text(reply)
    return bool(keypoints) and all(any(normalize_text(a) in normal for a in k) for k in keypoints)


@dataclass
class SynthRun(Spend):
    """The outcome of a run: kept cases (in order, resumed ones first), counts per filter, and what it sent."""

    cases: list[dict[str, Any]] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    resumed: int = 0


@dataclass(frozen=True)
class _Screened:
    """A reply after the checks that need no other question: ``outcome`` is the filter that dropped it, or ``""``
    with the parsed question, answer and verbatim keypoints."""

    outcome: str
    question: str = ""
    answer: str = ""
    keypoints: list[list[str]] = field(default_factory=list)


class Synthesizer:
    """Runs the plan: asks ``client`` per source, applies the filters (:data:`FILTERS`), and appends each source's
    outcome to the progress file, so a re-run skips what is done (and the call cache answers repeated requests).

    Requests go out in batches of ``plan.concurrency``. A batch holds the sources the one-at-a-time loop would take
    next if none of them were kept; their replies are then judged one by one in that order, and a source whose
    category filled up meanwhile is left unjudged and unrecorded (its reply stays in the call cache). So the kept
    questions, their order and every outcome are those of a run with ``concurrency: 1``: the seed alone decides them."""

    def __init__(self, kb: Dataset, plan: SynthPlan, client: ChatClient, progress: Path) -> None:
        self.kb, self.plan, self.client, self.progress = kb, plan, client, progress

    def _screen(self, source: Source, reply: str, duplicates: NearDuplicateIndex) -> _Screened:
        parsed = parse_synthesis(reply)
        if parsed is None:
            return _Screened("unparseable")
        question, answer, keypoints = parsed
        found = verbatim(keypoints, "\n".join(c.passage for c in source.chunks))
        if found is None:
            return _Screened("keypoint_not_in_source")
        if answer_in_question(question, answer, found):
            return _Screened("answer_in_question")
        if PASSAGE_BOUND.search(question):
            return _Screened("passage_bound")
        if duplicates.match(normalize_question(question)) is not None:
            return _Screened("near_duplicate")
        return _Screened("", question, answer, found)

    @staticmethod
    def _order(queues: dict[str, list[Source]], kept: Counter[str], targets: dict[str, int]) -> Iterator[Source]:
        """The one-at-a-time order, taken off the queues: categories in turn, each until it has its count (``kept``
        is read as it stands at each pick)."""
        while any(kept[name] < targets[name] and queues[name] for name in CATEGORIES):
            for name in CATEGORIES:
                if kept[name] < targets[name] and queues[name]:
                    yield queues[name].pop(0)

    def run(self, sources: dict[str, list[Source]], reporter: Reporter | None = None) -> SynthRun:
        reporter = reporter or SilentReporter()
        run = SynthRun(budget=self.plan.budget)
        done = _read_progress(self.progress)
        duplicates = NearDuplicateIndex(self.plan.near_duplicate)
        kept: Counter[str] = Counter()
        for record in done.values():
            if record["outcome"] == "kept":
                run.cases.append(record["case"])
                duplicates.add(normalize_question(record["case"]["question"]))
                kept[record["case"]["category"]] += 1
            else:
                run.dropped[record["outcome"]] += 1
        run.resumed = len(done)
        targets = self.plan.targets()
        queues = {name: [s for s in sources.get(name, []) if s.key not in done] for name in CATEGORIES}
        with reporter.task("synthesizing questions", max(self.plan.n - len(run.cases), 0)) as task, self.progress.open("a", encoding="utf-8") as log:
            order = self._order(queues, kept, targets)
            while batch := list(islice(order, self.plan.concurrency)):
                if run.exhausted():
                    return run
                replies = run.ask(self.client, [synth_prompt(s) for s in batch], self.plan.concurrency)
                screened = [None if reply is None else self._screen(source, reply, duplicates) for source, reply in zip(batch, replies)]
                closed: list[str | None] = [None] * len(batch)
                if self.plan.closed_book:
                    asked = [(i, s) for i, s in enumerate(screened) if s is not None and not s.outcome]
                    prompts = [fill(CLOSED_BOOK[batch[i].language], question=s.question) for i, s in asked]
                    for (i, _), reply in zip(asked, run.ask(self.client, prompts, self.plan.concurrency)):
                        closed[i] = reply
                for source, judged, closed_reply in zip(batch, screened, closed):
                    if judged is None or kept[source.category] >= targets[source.category]:
                        continue  # a failed request is not recorded (a re-run asks again), nor a source no longer needed
                    outcome, case = judged.outcome, None
                    if not outcome and duplicates.match(normalize_question(judged.question)) is not None:
                        outcome = "near_duplicate"  # of a question kept earlier in this batch
                    elif not outcome and self.plan.closed_book:
                        if closed_reply is None:
                            continue
                        outcome = "closed_book" if states_every_keypoint(closed_reply, judged.keypoints) else ""
                    if not outcome:
                        outcome, case = "kept", self._case(source, judged)
                    log.write(jsonl_text([{"source": source.key, "outcome": outcome, "case": case}]))
                    log.flush()
                    if case is None:
                        run.dropped[outcome] += 1
                        continue
                    run.cases.append(case)
                    duplicates.add(normalize_question(case["question"]))
                    kept[source.category] += 1
                    task.advance()
        return run

    @staticmethod
    def _case(source: Source, judged: _Screened) -> dict[str, Any]:
        return {"question": judged.question, "ground_truth": judged.answer, "keypoints": judged.keypoints, "category": source.category,
                "difficulty": DIFFICULTY[source.category], "relevant_doc_ids": list(dict.fromkeys(c.doc_id for c in source.chunks)),
                "source_chunks": [c.chunk_id for c in source.chunks], "link": source.link, "language": source.language}


def _read_progress(path: Path) -> dict[str, dict[str, Any]]:
    """The recorded outcome per source key; a torn last line (a killed run) is ignored."""
    if not path.is_file():
        return {}
    done: dict[str, dict[str, Any]] = {}
    for _, line in jsonl_lines(path.read_bytes()):
        try:
            record = parse_jsonl_line(line)
        except MalformedLine:
            continue
        done[record["source"]] = record
    return done


def synth_drafts(kb: Dataset, cases: list[dict[str, Any]], depth: int, encoder: CachedEncoder | None = None,
                 reporter: Reporter | None = None, retrievers: Sequence[str] = POOL_RETRIEVERS) -> list[dict[str, Any]]:
    """Draft rows of the kept cases (ids ``synth-0001``, ...): each question's pool (:func:`build_pools` with
    ``retrievers``) with its source chunks added when retrieval missed them, and those pre-checked."""
    pools = build_pools(kb, [c["question"] for c in cases], depth, encoder=encoder, reporter=reporter, retrievers=retrievers)
    chunks = {c.chunk_id: c for c in _source_chunks(kb, cases, encoder)}
    rows = []
    for number, (case, pool) in enumerate(zip(cases, pools), start=1):
        present = {c["chunk_id"] for c in pool}
        for chunk_id in case["source_chunks"]:
            if chunk_id not in present and chunk_id in chunks:
                chunk = chunks[chunk_id]
                pool.append({"doc_id": chunk.doc_id, "chunk_id": chunk.chunk_id, "title": chunk.title, "text": chunk.text,
                             "ranks": dict.fromkeys(retrievers)})
        rows.append(draft_case(
            f"synth-{number:04d}", case["question"], pool, kb.path, source="synth", stratum=case["category"],
            ground_truth=case["ground_truth"], keypoints=case["keypoints"], relevant_doc_ids=case["relevant_doc_ids"],
            category=case["category"], difficulty=case["difficulty"],
            extra={"source_chunks": case["source_chunks"], "link": case["link"], "language": case["language"]},
            pool_spec={"retrievers": list(retrievers), "depth": depth}))
    return rows


def _source_chunks(kb: Dataset, cases: list[dict[str, Any]], encoder: CachedEncoder | None) -> list[Chunk]:
    settings = settings_from_mapping({}, "synthesis settings", kb.model_defaults)
    wanted = {chunk_id for case in cases for chunk_id in case["source_chunks"]}
    table = RetrievalPipeline(kb, encoder=encoder).table(settings)
    return [c for c in table.chunks if c.chunk_id in wanted]
