"""ragas Faithfulness and NoiseSensitivity through our ChatClient, against a real loopback chat server.

The server answers ragas's own prompts from what they ask: statement extraction splits the answer
into sentences; a verdict is 1 when the statement (lower-cased, without its period) occurs in the
context. Every expected score below follows from that rule and is worked out by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tuner.chunking import Chunk
from tuner.cli import main
from tuner.dataset import GoldenCase
from tuner.embedding import CachedEncoder
from tuner.errors import UserError
from tuner.evaluation.robustness import CaseOutcome, VariantOutcome
from tuner.generation import Answer
from tuner.judging import KeypointVerdict
from tuner.evaluation import ragas_scores
from tuner.llm import LLMConfig
from tuner.backends import BackendResources
from tuner.llm.testing import FakeChatServer, Reply
from tuner.variants import VariantContext


@pytest.fixture(scope="module", autouse=True)
def ragas_installed() -> None:
    """Every test here is skipped without the extra. ragas is imported when the first one runs, not at collection:
    every xdist worker collects every module, and importing ragas costs ~4 s of CPU."""
    pytest.importorskip("ragas", reason="the optional extra is not installed: pip install 'tuner[ragas]'")


KEY_ENV = "TUNER_RAGAS_TEST_KEY"
KEY = "sk-ragas-test-5f1c9e"


def ragas_reply(body: dict[str, Any]) -> str:
    """A valid structured reply to a ragas prompt, derived from the input block that ends it."""
    prompt = body["messages"][-1]["content"]
    data = json.loads(prompt.rsplit("\ninput: ", 1)[1].rsplit("\nOutput:", 1)[0])
    if "answer" in data:
        return json.dumps({"statements": [s.strip() + "." for s in data["answer"].split(".") if s.strip()]})
    context = data["context"].lower()
    verdicts = [
        {"statement": s, "reason": "substring check", "verdict": int(s.rstrip(".").lower() in context)}
        for s in data["statements"]
    ]
    return json.dumps({"statements": verdicts})


@pytest.fixture
def server() -> Any:
    with FakeChatServer(ragas_reply) as running:
        yield running


@pytest.fixture
def config(server: FakeChatServer, monkeypatch: pytest.MonkeyPatch) -> LLMConfig:
    monkeypatch.setenv(KEY_ENV, KEY)
    return LLMConfig(base_url=server.url, model="fake-judge", api_key_env=KEY_ENV, timeout=0.5, max_retries=0,
                     backoff_base=0.0, concurrency=4)


def _row(variant: str, answer: str, passages: tuple[str, ...], judged: bool = True) -> VariantOutcome:
    chunks = tuple(Chunk(f"{variant}-{i}", "doc", 0, len(p), p) for i, p in enumerate(passages))
    verdict = KeypointVerdict("supported", "supported") if judged else KeypointVerdict(None, "supported", "", "parse_failure")
    return VariantOutcome(variant, VariantContext(variant, chunks), Answer(answer), (verdict,))


def _case(case_id: str, question: str) -> GoldenCase:
    return GoldenCase(case_id, question, "Alpha costs 10 euros.", (("10 euros",),), ("doc",))


# c1 v0: 3 statements, the context supports 2 → faithfulness 2/3. The only passage supporting the
#        ground truth ("relevant") backs "Alpha costs 10 euros", which is correct → noise sensitivity 0.
# c1 v3: 1 statement, supported → faithfulness 1. The relevant passage also backs the wrong price the
#        answer states → noise sensitivity 1/1.
# c2:    every reply is garbled → missing (parse_failure) in both variants.
# c3 v3: the keypoint judge has no score → not_judged; c3 v0: faithfulness 1, noise sensitivity 0.
OUTCOMES = [
    CaseOutcome(
        _case("c1", "What does Alpha cost?"),
        {
            "v0": _row("v0", "Alpha costs 10 euros. Alpha ships in May. Alpha is blue.",
                       ("Alpha costs 10 euros.", "Alpha ships in May.")),
            "v3": _row("v3", "Alpha costs 12 euros.", ("Alpha costs 10 euros. An old list says alpha costs 12 euros.",)),
        },
    ),
    CaseOutcome(
        _case("c2", "What does Alpha cost? [[garbled]]"),
        {"v0": _row("v0", "Alpha costs 10 euros.", ("Alpha costs 10 euros.",)),
         "v3": _row("v3", "Alpha costs 10 euros.", ("Alpha costs 10 euros.",))},
    ),
    CaseOutcome(
        _case("c3", "How much is Alpha?"),
        {"v0": _row("v0", "Alpha costs 10 euros.", ("Alpha costs 10 euros.",)),
         "v3": _row("v3", "Alpha costs 11 euros.", ("Alpha costs 10 euros.",), judged=False)},
    ),
]


def test_scores_are_the_scripted_ratios_and_failures_are_missing_by_reason(
    server: FakeChatServer, config: LLMConfig, tmp_path: Path
) -> None:
    server.script("[[garbled]]", Reply("Sure! The statements are: Alpha costs 10 euros."))
    scores = ragas_scores(OUTCOMES, ("v0", "v3"), config, BackendResources(cache_path=tmp_path / "calls.sqlite"), ci=False)
    v0, v3 = scores["v0"], scores["v3"]
    assert v0["faithfulness"].value == pytest.approx((2 / 3 + 1) / 2)
    assert (v0["faithfulness"].n, v0["faithfulness"].n_total) == (2, 3)
    assert v0["faithfulness"].missing == {"parse_failure": 1}
    assert v0["noise_sensitivity"].value == 0.0 and v0["noise_sensitivity"].missing == {"parse_failure": 1}
    assert v3["faithfulness"].value == 1.0 and v3["noise_sensitivity"].value == 1.0
    assert v3["faithfulness"].missing == {"not_judged": 1, "parse_failure": 1}
    assert v3["noise_sensitivity"].missing == {"not_judged": 1, "parse_failure": 1}
    # c2's identical v0/v3 samples are scored once per metric; the unjudged sample is never sent
    assert server.count("[[garbled]]") == 2
    assert server.count("Alpha costs 11 euros") == 0


def test_the_single_sample_faithfulness_and_the_api_key(
    server: FakeChatServer, config: LLMConfig, tmp_path: Path
) -> None:
    cache = tmp_path / "calls.sqlite"
    scores = ragas_scores(OUTCOMES[:1], ("v0",), config, BackendResources(cache_path=cache))
    assert round(scores["v0"]["faithfulness"].value, 3) == 0.667
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {KEY}"}
    assert KEY not in repr(scores) and KEY not in json.dumps({k: v.to_dict() for k, v in scores["v0"].items()})
    assert cache.exists() and KEY.encode() not in cache.read_bytes()


def test_a_timeout_is_missing_not_zero(server: FakeChatServer, config: LLMConfig) -> None:
    server.script("What does Alpha cost?", Reply("{}", delay=1.0))
    scores = ragas_scores(OUTCOMES[:1], ("v0",), config.model_copy(update={"cache": False}), ci=False)
    assert scores["v0"]["faithfulness"].value is None
    assert scores["v0"]["faithfulness"].missing == {"timeout": 1}


def test_without_ragas_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch, config: LLMConfig) -> None:
    for name in [m for m in sys.modules if m == "ragas" or m.startswith("ragas.")]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(UserError, match=r"pip install 'tuner\[ragas\]'") as raised:
        ragas_scores(OUTCOMES, ("v0",), config)
    assert "\n" not in str(raised.value)


FAST = ["--chunk-size", "40", "--top-k", "3", "--variants", "v3"]


def test_robustness_json_has_a_ragas_section(
    tmp_path: Path, tiny_dataset_dir: Path, encoder: CachedEncoder, server: FakeChatServer,
    config: LLMConfig, capsys: pytest.CaptureFixture[str],
) -> None:
    judge = tmp_path / "ragas.yaml"
    judge.write_text(f"base_url: {server.url}\nmodel: fake-judge\napi_key_env: {KEY_ENV}\ncache: false\n", "utf-8")
    assert main(["robustness", str(tiny_dataset_dir), *FAST, "--ragas", str(judge), "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert set(data["ragas"]) == {"v0", "v3"}
    for variant, per in data["ragas"].items():
        assert set(per) == {"faithfulness", "noise_sensitivity"}
        for estimate in per.values():
            assert estimate["n"] + sum(estimate["missing"].values()) == estimate["n_total"] == data["variants"][variant]["n_total"]
            assert estimate["n"] > 0 and 0.0 <= estimate["value"] <= 1.0
    assert server.count() > 0
    assert KEY not in captured.out and KEY not in captured.err


def test_robustness_table_has_a_ragas_section(
    tmp_path: Path, tiny_dataset_dir: Path, encoder: CachedEncoder, server: FakeChatServer,
    config: LLMConfig, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    judge = tmp_path / "ragas.yaml"
    judge.write_text(f"base_url: {server.url}\nmodel: fake-judge\napi_key_env: {KEY_ENV}\n", "utf-8")
    assert main(["robustness", str(tiny_dataset_dir), *FAST, "--ragas", str(judge)]) == 0
    err = capsys.readouterr().err
    assert "ragas on the same samples" in err and "noise sensitivity" in err and KEY not in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("base_url: http://127.0.0.1:9/v1\nmodle: x\n", "model: Field required"),
        ("base_url: http://127.0.0.1:9/v1\nmodel: x\napi_key_env: TUNER_RAGAS_UNSET_KEY\n",
         "environment variable TUNER_RAGAS_UNSET_KEY is not set"),
    ],
)
def test_a_bad_ragas_file_is_one_line_naming_it(
    tmp_path: Path, tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    bad = tmp_path / "ragas.yaml"
    bad.write_text(text, "utf-8")
    assert main(["robustness", str(tiny_dataset_dir), "--ragas", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].count(str(bad)) == 1 and message in err[0]
