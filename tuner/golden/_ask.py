"""Golden set (corpus, answers → **chat model**): the requests ``tuner golden synth`` and ``tuner golden keypoints``
send, a few at a time, with the tokens they spend counted against a budget."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from tuner.llm import BackendError, ChatClient, Completion, map_concurrent


def _complete(client: ChatClient, prompt: str) -> Completion | BackendError:
    """The reply to one user message, or the error of a request that failed for good (retries spent); a fatal error
    (a bad key, an unknown model) is raised, since every other request would fail the same way."""
    try:
        return client.complete([{"role": "user", "content": prompt}])
    except BackendError as exc:
        if exc.fatal:
            raise
        return exc


@dataclass
class Spend:
    """What a run sent: ``requests`` answered, ``tokens`` spent (prompt + completion as the endpoint reports them;
    call-cache hits cost nothing), failed requests by kind, and whether the token ``budget`` stopped it."""

    budget: int | None = None
    requests: int = 0
    tokens: int = 0
    failed: Counter[str] = field(default_factory=Counter)
    stopped_by_budget: bool = False

    def exhausted(self) -> bool:
        """True (and remembered) once the tokens spent reach the budget: the run sends nothing more."""
        if self.budget is not None and self.tokens >= self.budget:
            self.stopped_by_budget = True
        return self.stopped_by_budget

    def ask(self, client: ChatClient, prompts: Sequence[str], concurrency: int = 1) -> list[str | None]:
        """The replies to ``prompts``, in their order, at most ``concurrency`` requests in flight; ``None`` for a
        request that failed (counted in ``failed``). The budget is checked by the caller before each batch, so a
        batch may overrun it by at most ``concurrency - 1`` requests."""
        replies: list[str | None] = []
        for result in map_concurrent(lambda prompt: _complete(client, prompt), prompts, concurrency):
            if isinstance(result, BackendError):
                self.failed[result.kind] += 1
                replies.append(None)
                continue
            self.requests += 1
            if not result.cached:
                self.tokens += result.prompt_tokens + result.completion_tokens
            replies.append(result.text)
        return replies
