"""Export (framework exports): what a ``tuner export --format NAME`` is (:class:`FrameworkExport`), their registry
(:data:`FRAMEWORKS`, which ``--format`` offers), the writer of one (:func:`write_framework_export`) and the rows of
what does not translate that every framework shares: the settings tuner's field metadata marks
(:data:`tuner.settings.FRAMEWORKS_LACK`), sentence snapping and the metadata filter a BM25 retriever cannot apply."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from tuner.errors import UserError
from tuner.io import atomic_write_text
from tuner.retrieval import FILTER_FIELDS
from tuner.settings import FIRST_STAGES, FRAMEWORKS_LACK, RetrievalSettings, settings_from_mapping

SNIPPET_FENCE = "-" * 8

Entry = TypeVar("Entry")
"""A framework's translation of one retriever (a function of the settings)."""
Untranslated = tuple[str, Any, str]
"""A setting the framework has no equivalent for: (name, value, what the framework does instead)."""
Translation = tuple[dict[str, Any], list[Untranslated]]
"""A framework's native settings nearest a configuration, and what of the configuration does not translate."""


@dataclass(frozen=True)
class FrameworkExport:
    """One ``--format``: ``translate`` gives the framework's native settings nearest a configuration and its provenance
    (Milvus's reads where the trial was measured) and the rows that do not translate; ``retrievers`` is its translation
    of each tuner retriever (one entry per name of :data:`tuner.settings.FIRST_STAGES`, which a test checks);
    ``adapter`` says what reproduces the measured retrieval instead (``from_config``: a class that loads the export);
    ``snippet``, where the framework has one, writes the native settings as code to paste."""

    name: str
    translate: Callable[[RetrievalSettings, Mapping[str, Any]], Translation]
    retrievers: Mapping[str, Callable[..., dict[str, Any]]]
    adapter: str
    from_config: bool = False
    snippet: Callable[[Mapping[str, Any]], list[str]] | None = None


FRAMEWORKS: dict[str, FrameworkExport] = {}
"""Every ``--format`` besides ``tuner``, by name, in registration order (``tuner/export/__init__.py``'s imports)."""


def register_framework(export: FrameworkExport) -> FrameworkExport:
    """Add ``export`` to :data:`FRAMEWORKS` under its name; a second one of the same name is a bug."""
    if export.name in FRAMEWORKS:
        raise ValueError(f"framework export {export.name!r} registered twice")
    FRAMEWORKS[export.name] = export
    return export


def overlap_units(settings: RetrievalSettings) -> int:
    return int(round(settings.chunk_size * settings.chunk_overlap))


def untranslated(settings: RetrievalSettings, fusion: str, cutoff: bool) -> list[Untranslated]:
    """What a framework cannot express; ``cutoff`` says whether its similarity cutoff means tuner's threshold. The
    settings of :data:`tuner.settings.FRAMEWORKS_LACK` have a row where they are off their default and act, with the
    text their field declares (a ``str.format`` template over the settings)."""
    rows: list[Untranslated] = []
    if settings.chunk_unit == "words":
        rows.append(("chunk_unit", "words", "no whitespace-word splitter: the character splitter below is the nearest"))
    rows.append(("chunking", "sentence snapping", "tuner ends a chunk at the last sentence end past half its size; "
                 "the splitters below break at their own separators"))
    if settings.acts("hybrid_weight"):
        rows.append(("hybrid_weight", settings.hybrid_weight, f"tuner blends normalized scores convexly; {fusion}"))
    if settings.relevance_threshold > 0 and not cutoff:
        rows.append(("relevance_threshold", settings.relevance_threshold,
                     "applies to tuner's normalized final score (BM25: the share of the query's Σidf a chunk reaches; hybrid and "
                     "reranked: a blend); the framework's scores are on another scale"))
    values = settings.model_dump()
    for name, why in FRAMEWORKS_LACK.items():
        if values[name] != RetrievalSettings.model_fields[name].default and settings.acts(name):
            rows.append((name, values[name], why.format(**values)))
            if name == "rerank_strength" and settings.reranker.startswith("embedding-maxsim"):  # the reranker it blends
                rows.append(("reranker", settings.reranker, "max cosine over a chunk's sentences exists in no framework"))
    return rows


def retriever_entry(entries: Mapping[str, Entry], settings: RetrievalSettings, framework: str) -> Entry:
    """The framework's retriever for ``settings.retriever``. A retriever the framework's module has no translation of
    is refused in one line, never exported as a stand-in: a new retriever works in tuner (studies, eval, ``tuner
    serve``, ``--format tuner``) with its own three files, and each framework that can express it gets its entry in
    that framework's module when someone writes it."""
    if settings.retriever not in entries:
        raise UserError(f"--format {framework}: retriever '{settings.retriever}' has no {framework} equivalent (tuner "
                        f"translates {', '.join(entries)} there): export --format tuner and serve it with tuner serve")
    return entries[settings.retriever]


def filter_untranslated(settings: RetrievalSettings, retriever: str) -> list[Untranslated]:
    """What of the active ``metadata_filter`` the framework's export leaves out: all of it on a BM25 retriever (neither
    framework's BM25 retriever filters), the BM25 half of a hybrid one, and chunk fields the framework does not know."""
    wanted = settings.active_filter
    rows: list[Untranslated] = []
    if not wanted:
        return rows
    first_stage = FIRST_STAGES[settings.retriever]
    if first_stage.bm25:
        rows.append(("metadata_filter", settings.metadata_filter, f"{retriever} has no metadata filter: "
                     + ("only the dense retriever filters" if first_stage.needs_vectors else "nothing is filtered")
                     + f"; filter the documents before building it ({wanted})"))
    fields = [key for key in wanted if key in FILTER_FIELDS]
    if fields:
        rows.append(("metadata_filter", settings.metadata_filter, f"tuner chunk fields ({', '.join(fields)}): "
                     "copy them into each document's metadata for the framework's filter to see them"))
    return rows


def _one_line(value: Any) -> str:
    """``value`` as text on one comment line: a line break (any YAML or Python reads as one) becomes a space, so a
    setting's value never ends the comment and starts YAML or code.

    >>> _one_line("a\\nb\\u2028c"), _one_line(0.5)
    ('a b c', '0.5')
    """
    return " ".join(str(value).splitlines())


def write_framework_export(path: str | Path, document: dict[str, Any], framework: str) -> Path:
    """The nearest ``framework`` settings of an export (LangChain, LlamaIndex, the knowledge bases of Dify and
    RAGFlow: chunk size and overlap in their units, ``k`` / ``top_k``, a similarity cutoff where one exists; Milvus: the
    search of the collection the trial measured) as YAML, headed by a table of the settings that do not translate (and,
    for Milvus, the search as Python); the adapter reproduces the measured retrieval instead."""
    export = FRAMEWORKS[framework]
    native, rows = export.translate(settings_from_mapping(document["settings"], "export settings"), document["provenance"])
    header = [f"# {framework} settings nearest to the measured configuration, written by tuner export --format {framework}.",
              f"# For the retrieval the study measured, use {export.adapter}"
              + (".from_config(...) instead." if export.from_config else " instead."),
              "# What does not translate:", "#", "# | setting | value | why |", "# |---|---|---|"]
    header += [f"# | {_one_line(name)} | {_one_line(value)} | {_one_line(why)} |" for name, value, why in rows]
    if export.snippet is not None:
        header += ["#", f"# As {framework} code (between the {SNIPPET_FENCE} lines):", f"# {SNIPPET_FENCE}"]
        header += [f"# {line}".rstrip() for line in export.snippet(native)] + [f"# {SNIPPET_FENCE}"]
    body = {"framework": framework, "native": native, "adapter": export.adapter,
            "not_translated": [{"setting": name, "value": value, "why": why} for name, value, why in rows],
            "settings": document["settings"], "provenance": document["provenance"]}
    target = Path(path)
    atomic_write_text(target, "\n".join(header) + "\n" + yaml.safe_dump(body, sort_keys=False, allow_unicode=True))
    return target
