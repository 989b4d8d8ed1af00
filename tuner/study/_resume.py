"""Study (trials → **study**): what a resumed study must find as the worker that created it recorded it, beside its
dataset, engine and encoders (``_run``): the rules by which tuner turns text into scores
(:data:`tuner.retrieval.TEXT_RULES`), so that one front never holds trials measured under two BM25 rules."""

from __future__ import annotations

from collections.abc import Mapping

from tuner.errors import UserError
from tuner.front import StudyRecord
from tuner.progress import Reporter
from tuner.redaction import redact
from tuner.retrieval import RETRIEVERS, TEXT_RULES
from tuner.study._config import LoadedStudy
from tuner.study._space import SearchSpace


def changed_text_rules(recorded: Mapping[str, str], now: Mapping[str, str], bm25: bool) -> list[str]:
    """The rules of ``now`` that differ from the ``recorded`` ones and act on the study: the text layer always (the
    reader's word match reads it too), the BM25 list rule only where the study can run a retriever that scores BM25
    (``bm25``). A rule the record lacks (kept by a later tuner) is not compared.

    >>> changed_text_rules({"text_layer": "text-v3", "bm25_list": "bm25-list-filled"},
    ...                    {"text_layer": "text-v4", "bm25_list": "bm25-list-scored-only"}, bm25=False)
    ['text_layer']
    """
    return [key for key, rule in now.items() if key in recorded and recorded[key] != rule
            and (bm25 or key != "bm25_list")]


def scores_bm25(loaded: LoadedStudy, space: SearchSpace) -> bool:
    """Whether a trial of the study can score BM25 in tuner: tuner's own retrieval (not a service) with a retriever,
    fixed or among the space's choices, whose ``RETRIEVERS`` entry scores BM25."""
    if loaded.config.retriever is not None:
        return False
    param = space.params.get("retriever")
    names = {loaded.base_settings.retriever, *(getattr(param, "choices", None) or ())}
    return any(RETRIEVERS[str(name)].spec.bm25 for name in names if str(name) in RETRIEVERS)


def check_text_rules(loaded: LoadedStudy, space: SearchSpace, record: StudyRecord, reporter: Reporter) -> None:
    """Refuse, in one line, to resume a study created under other text rules than this tuner's
    (:func:`changed_text_rules`): its trials would sit in one front measured two ways. A study recorded before tuner
    kept them that can score BM25 is resumed with one line saying its earlier trials' rule is not known."""
    name, storage = loaded.config.name, redact(loaded.storage)
    bm25 = scores_bm25(loaded, space)
    if record.text_rules is None:
        if bm25:
            reporter.stage(f"study '{name}' recorded no text rules (created before tuner kept them): its earlier BM25 "
                           f"trials may have been measured under another rule than {TEXT_RULES['bm25_list']} with "
                           f"{TEXT_RULES['text_layer']}; a new name or storage compares like with like")
        return
    changed = changed_text_rules(record.text_rules, TEXT_RULES, bm25)
    if changed:
        before = ", ".join(f"{key} {record.text_rules[key]}" for key in changed)
        after = ", ".join(TEXT_RULES[key] for key in changed)
        raise UserError(f"study '{name}' in {storage} was measured under {before}, this tuner scores text under {after}: "
                        "trials under two rules are not comparable; use a new name or storage, or the tuner version "
                        "it was created with")
