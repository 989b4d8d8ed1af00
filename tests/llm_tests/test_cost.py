"""Cached prompt tokens and prices (issue 23 §2–3): read from either provider's usage fields, priced per backend."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tuner.llm import ChatClient, LLMConfig, Pricing, Usage
from tuner.llm.testing import FakeChatServer, PrefixCache

PASSAGES = " ".join(f"passage{i}" for i in range(40))


def test_cost_is_hand_computed() -> None:
    # 600 uncached prompt tokens at 2, 400 cached at 0.5, 250 completion at 8, per million: (1200 + 200 + 2000) / 1e6
    assert Pricing(input=2.0, cached_input=0.5, output=8.0).cost(1000, 400, 250) == pytest.approx(3.4e-3)
    # without cached_input a cached token costs what any input token does
    assert Pricing(input=2.0, output=8.0).cost(1000, 400, 250) == pytest.approx(4.0e-3)
    with pytest.raises(ValidationError, match="cached_input must not exceed input"):
        Pricing(input=1.0, cached_input=2.0, output=1.0)


@pytest.mark.parametrize("style", ["openai", "deepseek"])
def test_cached_tokens_of_either_provider_reach_the_usage_counters_and_the_cost(style: str) -> None:
    usage = Usage()
    pricing = Pricing(input=1.0, cached_input=0.25, output=4.0)
    with FakeChatServer(prefix_cache=PrefixCache(block=8), usage_style=style) as server:  # type: ignore[arg-type]
        client = ChatClient(LLMConfig(base_url=server.url, model="m", api_key_env=None, cache=False, pricing=pricing), usage=usage)
        first = client.complete([{"role": "user", "content": f"{PASSAGES} first question"}])
        second = client.complete([{"role": "user", "content": f"{PASSAGES} second question"}])
    # 40 shared words = 5 blocks of 8; the 2 words after them differ
    assert (first.cached_prompt_tokens, second.cached_prompt_tokens) == (0, 40)
    counts = usage.snapshot()
    assert (counts.prompt_tokens, counts.cached_tokens, counts.completion_tokens) == (84, 40, 2)
    assert counts.cost == pytest.approx(pricing.cost(84, 40, 2)) and counts.cost == pytest.approx((44 + 10 + 8) / 1e6)


def test_the_prefix_cache_only_serves_whole_blocks_of_the_same_model() -> None:
    cache = PrefixCache(block=4)
    assert cache.hit("m", "a b c d e f g h i") == 0
    assert cache.hit("m", "a b c d e f g x") == 4  # the second block differs in its last word
    assert cache.hit("m", "a b c d e f g h i j") == 8
    assert cache.hit("n", "a b c d e f g h") == 0
