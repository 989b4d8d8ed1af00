"""The vocabulary of judging (answers → **verdicts** → metrics): verdict labels, the keypoint verdict, and
why a score can be missing. Judges produce these; metrics, reports and the gate read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Verdict = Literal["supported", "contradicted", "absent"]
SUPPORTED: Final = "supported"
CONTRADICTED: Final = "contradicted"
ABSENT: Final = "absent"
VERDICTS: tuple[Verdict, ...] = (SUPPORTED, CONTRADICTED, ABSENT)
"""``supported``: the text states the keypoint; ``contradicted``: it states something incompatible with it
(a different value); ``absent``: it does not say it (an abstention is absent)."""

MISSING_REASONS: dict[str, str] = {
    "timeout": "the backend did not answer in time",
    "backend_error": "the backend failed on this request (after its retries)",
    "malformed_reply": "the server answered HTTP 200 with a body that is not a reply (truncated JSON, an HTML page), after the retries",
    "empty_answer": "the generator returned no text",
    "parse_failure": "a judge reply was not the JSON asked for, even after repair prompts",
    "not_judged": "the keypoint judge has no score for this sample, so there is nothing to compare with (ragas)",
    "no_context": "the variant's context is empty (ragas)",
    "no_reference": "the case has no ground_truth (ragas NoiseSensitivity)",
    "inconsistent_reply": "replies parsed but could not be combined, e.g. fewer verdicts than statements (ragas)",
    "no_statements": "the model found no statements in the answer, so the ratio is undefined (ragas)",
}
"""Every reason a score can be missing, with its meaning. A missing score is counted by reason, never as 0."""
GENERATION_MISSING: Final = ("timeout", "backend_error", "malformed_reply", "empty_answer")
"""The reasons an answer can be missing."""


@dataclass(frozen=True)
class KeypointVerdict:
    """Verdicts for one keypoint. ``answer``: what the answer says about it; ``context``: what the
    contexts say about it. A ``None`` verdict is a missing score and always comes with
    ``missing_reason`` (the first side's reason if both are missing); ``evidence`` quotes the text
    the verdicts rest on, prefixed ``answer:`` or ``context[i]:``."""

    answer: Verdict | None
    context: Verdict | None
    evidence: str = ""
    missing_reason: str | None = None

    def __post_init__(self) -> None:
        if (self.answer is None or self.context is None) != (self.missing_reason is not None):
            raise ValueError(f"a missing verdict needs a missing_reason and only then: {self!r}")
