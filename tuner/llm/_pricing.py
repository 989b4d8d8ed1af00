"""LLM plumbing (answers, verdicts → **chat endpoint**): what one backend's tokens cost, from the prices its config
states (no built-in price list: providers change them, and a stale list would mislead)."""

from __future__ import annotations

from pydantic import Field, model_validator

from tuner.strict import StrictModel


class Pricing(StrictModel):
    """``pricing: {input: 0.15, cached_input: 0.075, output: 0.60}``: prices per million tokens, in whatever currency
    the user reads them in (reports print the figure without a symbol). ``cached_input`` is what a prompt token served
    from the provider's prefix cache costs; it defaults to ``input`` (a provider without prompt caching)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _cached_at_most_input(self) -> Pricing:
        if self.cached_input is not None and self.cached_input > self.input:
            raise ValueError("cached_input must not exceed input (it is the discounted price of cached prompt tokens)")
        return self

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float:
        """cost = ((prompt − cached) · input + cached · cached_input + completion · output) / 10⁶.

        ``cached_tokens`` are the part of ``prompt_tokens`` the provider served from its cache.

        >>> Pricing(input=2.0, cached_input=0.5, output=8.0).cost(1_000_000, 400_000, 250_000)
        3.4
        """
        cached_price = self.input if self.cached_input is None else self.cached_input
        uncached = prompt_tokens - cached_tokens
        return (uncached * self.input + cached_tokens * cached_price + completion_tokens * self.output) / 1_000_000
