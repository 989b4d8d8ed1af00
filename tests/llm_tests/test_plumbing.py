from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from tuner.llm import CachedReply, CallCache, LLMConfig, Usage, UsageCounts, fill, map_concurrent, request_key


def test_map_concurrent_keeps_order_and_runs_in_parallel() -> None:
    started = time.monotonic()
    assert map_concurrent(lambda x: (time.sleep(0.1), x * x)[1], range(6), limit=6) == [0, 1, 4, 9, 16, 25]
    assert time.monotonic() - started < 0.45


def test_map_concurrent_reraises() -> None:
    def boom(x: int) -> int:
        if x == 3:
            raise ValueError("three")
        return x

    with pytest.raises(ValueError, match="three"):
        map_concurrent(boom, range(5), limit=2)


def test_usage_is_thread_safe_and_snapshots_subtract() -> None:
    usage = Usage()
    before = usage.snapshot()
    threads = [threading.Thread(target=lambda: [usage.add(calls=1, prompt_tokens=2) for _ in range(500)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    trial = usage.snapshot() - before
    assert trial == UsageCounts(calls=2000, prompt_tokens=4000)
    assert (trial + trial).as_dict()["prompt_tokens"] == 8000


def test_request_key_covers_every_field() -> None:
    request = {"base_url": "u", "model": "m", "messages": [{"role": "user", "content": "x"}], "seed": None}
    assert request_key(request) == request_key(dict(reversed(request.items())))
    assert request_key(request) != request_key({**request, "seed": 0})


def test_config_rejects_unknown_keys_and_bad_values() -> None:
    with pytest.raises(ValidationError, match="api_key"):
        LLMConfig(base_url="u", model="m", api_key="sk-nope")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="concurrency"):
        LLMConfig(base_url="u", model="m", concurrency=0)


def test_fill_is_one_pass_and_keeps_other_braces() -> None:
    assert fill('{q} -> {"a": 1} {c}', q="{c}", c="C") == '{c} -> {"a": 1} C'


_WRITER = """
import sys
from tuner.llm import CachedReply, CallCache
cache = CallCache(sys.argv[1])
for i in range(150):
    cache.put(f"{sys.argv[2]}-{i}", {"n": i}, CachedReply(f"text {i}", i, 1))
    assert cache.get(f"{sys.argv[2]}-{i}") is not None
"""


def test_call_cache_is_shared_by_concurrent_processes(tmp_path: Path) -> None:
    path = tmp_path / "calls.sqlite"
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), name]) for name in ("a", "b")]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    cache = CallCache(path)
    assert len(cache) == 300
    assert cache.get("b-149") == CachedReply("text 149", 149, 1)
