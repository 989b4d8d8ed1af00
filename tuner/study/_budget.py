"""Study (**trials**, budget): what a study may spend in money and tokens (``budget.max_cost``, ``budget.max_tokens``),
and the check that stops it, between batches of cases, the way an interrupt does: the running trial is failed and
queued again, the report and export are written, and a larger budget resumes it."""

from __future__ import annotations

from tuner.errors import BudgetSpent
from tuner.llm import Usage, UsageCounts
from tuner.study._config import BudgetConfig
from tuner.front import TrialCalls


class SpendingMeter:
    """What the study has spent: the ``calls`` of its stored trials (every worker's, counted when a trial starts) plus
    this worker's requests since then, read live from the usage counters. The noise floor calibration is not a trial
    and is not counted."""

    def __init__(self, budget: BudgetConfig, usage: Usage) -> None:
        self.budget = budget
        self.usage = usage
        self._stored_cost = 0.0
        self._stored_tokens = 0
        self._start = UsageCounts()

    @property
    def limited(self) -> bool:
        return self.budget.max_cost is not None or self.budget.max_tokens is not None

    def restart(self, stored: TrialCalls) -> None:
        """Count from the stored trials' totals (``study_summary(study).calls``) and this moment's counters."""
        self._stored_cost, self._stored_tokens = stored.cost, stored.tokens
        self._start = self.usage.snapshot()

    def spent(self) -> tuple[float, int]:
        """(cost, tokens) spent so far."""
        live = self.usage.snapshot() - self._start
        return self._stored_cost + live.cost, self._stored_tokens + live.prompt_tokens + live.completion_tokens

    def exhausted(self) -> str | None:
        """Why the budget is spent, or None."""
        cost, tokens = self.spent()
        if self.budget.max_cost is not None and cost >= self.budget.max_cost:
            return f"budget.max_cost {self.budget.max_cost:g} reached (spent {cost:.4g})"
        if self.budget.max_tokens is not None and tokens >= self.budget.max_tokens:
            return f"budget.max_tokens {self.budget.max_tokens:,} reached (spent {tokens:,} tokens)"
        return None

    def check(self) -> None:
        """Raise :class:`BudgetSpent` once the budget is spent (called before each batch of cases)."""
        reason = self.exhausted()
        if reason is not None:
            raise BudgetSpent(reason)
