"""Metrics (answers → **ragas metrics**, optional): ragas Faithfulness and NoiseSensitivity on the samples the keypoint
judge scored (extra ``tuner[ragas]``).

ragas (and the langchain it pulls in) is imported only when :func:`ragas_scores` runs, so ``import
tuner`` stays light and works without the extra. ragas's own prompts and score formulas are used;
its requests go through :class:`RagasChatLLM`, an adapter over our :class:`~tuner.llm.ChatClient`, so
they get the same retries, call cache, usage counters, API-key handling and error kinds as every
other backend.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from tuner.extras import import_extra
from tuner.evaluation.robustness import CaseOutcome
from tuner.backends import BackendResources
from tuner.llm import (
    BackendError,
    ChatClient,
    LLMConfig,
    ReplyParseError,
    map_concurrent,
    missing_reason_for,
    parse_structured,
)
from tuner.progress import Reporter, SilentReporter
from tuner.stats import CiMethod, Estimate, mean_estimate

RAGAS_METRICS = ("faithfulness", "noise_sensitivity")
M = TypeVar("M", bound=BaseModel)


class RagasChatLLM:
    """ragas's structured-output LLM interface (``generate`` / ``agenerate`` with a pydantic response
    model) over a :class:`ChatClient`. Registered as a virtual subclass of ragas's
    ``InstructorBaseRagasLLM`` once ragas is imported, which is what its metrics check for."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    def generate(self, prompt: str, response_model: type[M]) -> M:
        return parse_structured(self.client.complete([{"role": "user", "content": prompt}]).text, response_model)

    async def agenerate(self, prompt: str, response_model: type[M]) -> M:
        # Blocking here is fine: every sample runs in its own worker thread and event loop, and ragas
        # awaits a sample's requests one after another anyway.
        return self.generate(prompt, response_model)


@dataclass(frozen=True)
class RagasSample:
    """One (case, variant) as ragas sees it: the question, the answer, the variant's passages, the ground truth."""

    user_input: str
    response: str
    retrieved_contexts: tuple[str, ...]
    reference: str


def ragas_samples(outcomes: Sequence[CaseOutcome], variant: str) -> list[RagasSample | str]:
    """Per case, the sample of ``variant``, or the missing reason when the keypoint judge has no score for it."""
    samples: list[RagasSample | str] = []
    for outcome in outcomes:
        row = outcome.variants[variant]
        if row.missing is not None:
            samples.append("not_judged")
            continue
        case = outcome.case
        samples.append(RagasSample(case.question, row.answer.text, tuple(row.context.passages), case.ground_truth))
    return samples


def require_ragas() -> None:
    """Import ragas, or raise a one-line :class:`UserError` saying how to install it (call before long work)."""
    # ragas posts usage events to its makers from its own LLM wrappers; ours sends nothing, and this
    # keeps any other code path quiet too unless the user set the variable.
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    import_extra("ragas.llms", "scoring with ragas", "ragas")
    import_extra("ragas.metrics.collections", "scoring with ragas", "ragas")


def _load_metrics(llm: RagasChatLLM) -> dict[str, Any]:
    require_ragas()
    from ragas.llms import InstructorBaseRagasLLM
    from ragas.metrics.collections import Faithfulness, NoiseSensitivity

    InstructorBaseRagasLLM.register(RagasChatLLM)
    ragas_llm = cast(InstructorBaseRagasLLM, llm)  # a virtual subclass since the line above; mypy cannot see that
    return {"faithfulness": Faithfulness(llm=ragas_llm), "noise_sensitivity": NoiseSensitivity(llm=ragas_llm)}


def _score(metric: Any, name: str, sample: RagasSample) -> tuple[float | None, str | None]:
    """(score, None) or (None, missing reason) for one metric on one sample; an unreachable endpoint raises."""
    if not sample.retrieved_contexts:
        return None, "no_context"
    inputs: dict[str, Any] = {
        "user_input": sample.user_input,
        "response": sample.response,
        "retrieved_contexts": list(sample.retrieved_contexts),
    }
    if name == "noise_sensitivity":
        if not sample.reference.strip():
            return None, "no_reference"
        inputs["reference"] = sample.reference
    try:
        value = metric.score(**inputs).value
    except BackendError as exc:
        return None, missing_reason_for(exc)
    except ReplyParseError:
        return None, "parse_failure"
    except ValueError:
        # Our inputs are checked above, so ragas raises this only on replies it cannot combine
        # (verdict lists of different lengths, no reference statements to take a maximum over).
        return None, "inconsistent_reply"
    if value is None or math.isnan(value):
        return None, "no_statements"
    return float(value), None


def ragas_scores(
    outcomes: Sequence[CaseOutcome],
    variants: Sequence[str],
    llm_config: LLMConfig,
    resources: BackendResources | None = None,
    reporter: Reporter | None = None,
    ci: bool = True,
    seed: int = 0,
) -> dict[str, dict[str, Estimate]]:
    """``{variant: {"faithfulness": Estimate, "noise_sensitivity": Estimate}}`` over the cases of ``outcomes``.

    Per (case, variant) scored by the keypoint judge, ragas ``Faithfulness`` (user_input = question,
    response = answer, retrieved_contexts = the variant's passages; share of the answer's statements
    the context supports, higher is better) and ``NoiseSensitivity`` in its default "relevant" mode
    (also reference = ground truth; share of the answer's statements that are wrong yet supported by a
    relevant passage, lower is better). Each estimate is the mean over the scored samples with a
    bootstrap interval (none when ``ci`` is false); the other samples are missing, counted by reason
    (:data:`tuner.verdicts.MISSING_REASONS`), never scored 0.

    The judge model is ``llm_config`` (its key is read from the variable named by ``api_key_env``);
    identical samples are scored once. An unreachable endpoint or a rejected key raises
    :class:`~tuner.llm.BackendError`; ragas not installed raises :class:`UserError`.
    """
    resources = resources if resources is not None else BackendResources()
    metrics = _load_metrics(RagasChatLLM(resources.chat_client(llm_config)))
    samples = {variant: ragas_samples(outcomes, variant) for variant in variants}
    jobs = list(
        dict.fromkeys(
            (name, sample)
            for per_case in samples.values()
            for sample in per_case
            if isinstance(sample, RagasSample)
            for name in RAGAS_METRICS
        )
    )
    with (reporter or SilentReporter()).task(f"ragas: scoring {len(jobs)} (metric, sample) pairs", len(jobs)) as task:

        def run(job: tuple[str, RagasSample]) -> tuple[float | None, str | None]:
            result = _score(metrics[job[0]], *job)
            task.advance()
            return result

        results = dict(zip(jobs, map_concurrent(run, jobs, llm_config.concurrency)))
    method: CiMethod | None = "bootstrap" if ci else None
    scores: dict[str, dict[str, Estimate]] = {}
    for variant, per_case in samples.items():
        scores[variant] = {}
        for name in RAGAS_METRICS:
            pairs = [results[(name, s)] if isinstance(s, RagasSample) else (None, s) for s in per_case]
            scores[variant][name] = mean_estimate(
                [value for value, _ in pairs], [reason for _, reason in pairs], ci_method=method, seed=seed
            )
    return scores
