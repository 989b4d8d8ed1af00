from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tuner.cli import main
from tuner.corruption.llm import parse_rewrite
from tuner.dataset import load_dataset
from tuner.llm.testing import Failure, FakeChatServer


def document_of(prompt: str) -> str:
    return prompt.split("DOCUMENT:\n", 1)[1].split("\n\nReply with only", 1)[0]


def rewriter(body: dict[str, Any]) -> str:
    """A stand-in model: bumps every digit; names each new dollar amount plus one value it never wrote."""
    prompt = body["messages"][0]["content"]
    if "Corruption: numeric_typo" in prompt:
        return "Sorry, I cannot help with that."
    if "Corruption: relevance_poisoning" in prompt:
        return json.dumps({"text": "General notes on the topic, without specifics.", "wrong_values": ["ignored"]})
    text = re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), document_of(prompt))
    return "```json\n" + json.dumps({"text": text, "wrong_values": [*re.findall(r"\$[\d,]+", text), "$0"]}) + "\n```"


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    with FakeChatServer(rewriter) as running:
        yield running


def write_config(path: Path, server: FakeChatServer, **extra: Any) -> Path:
    values = {"base_url": server.url, "model": "fake-rewriter", "api_key_env": None, "cache": False, "backoff_base": 0.0, **extra}
    path.write_text("".join(f"{key}: {json.dumps(value)}\n" for key, value in values.items()), "utf-8")
    return path


def test_llm_mode_keeps_checked_rewrites_and_records_skips(
    dataset_dir: Path, tmp_path: Path, server: FakeChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path / "llm.yaml", server)
    code = main(["corrupt", str(dataset_dir), "--llm-config", str(config), "--severities", "moderate"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    conflicts = {c.doc_id: c for c in load_dataset(dataset_dir).conflicts}
    x200 = conflicts["x200__factual_corruption__moderate"]
    assert x200.text.startswith("The Aurora X311 laptop costs $2,300 and was released on March 6, 3135.")
    assert x200.wrong_values == ("$2,300",)
    assert conflicts["x200__relevance_poisoning__moderate"].wrong_values == ()
    assert not any(c.kind == "numeric_typo" for c in conflicts.values())
    assert "returns__factual_corruption__moderate" not in conflicts
    assert "unparseable model reply" in out and "model reply named no wrong value found in its text" in out
    assert server.count() == 12
    prompt = next(r.text for r in server.requests if "Corruption: factual_corruption" in r.text and "Aurora" in r.text)
    assert "$1,299 / 1299 dollars; March 5, 2024" in prompt and "Severity: moderate:" in prompt


def test_unreachable_model_stops_the_run_with_one_line(
    dataset_dir: Path, tmp_path: Path, server: FakeChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script("", Failure(404, "no such model"))
    code = main(["corrupt", str(dataset_dir), "--llm-config", str(write_config(tmp_path / "llm.yaml", server))])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "404" in err
    assert not (dataset_dir / "conflicts.jsonl").exists()


def test_a_rejected_request_is_a_skip_not_a_stop(
    dataset_dir: Path, tmp_path: Path, server: FakeChatServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script("Nimbus Retail", Failure(400, "too long"))
    config = write_config(tmp_path / "llm.yaml", server)
    code = main(["corrupt", str(dataset_dir), "--llm-config", str(config), "--types", "factual_corruption"])
    out, _ = capsys.readouterr()
    assert code == 0 and "model request failed (request)" in out
    assert {c.conflicts_with for c in load_dataset(dataset_dir).conflicts} == {"x200"}


def test_bad_config_is_one_line_naming_file_and_key(dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "llm.yaml"
    config.write_text("base_url: http://127.0.0.1:9/v1\n", "utf-8")
    code = main(["corrupt", str(dataset_dir), "--llm-config", str(config)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and f"{config}: model:" in err


@pytest.mark.parametrize(
    ("reply", "parsed"),
    [
        ('{"text": "New.", "wrong_values": ["x", " "]}', ("New.", ("x",))),
        ('Sure!\n```json\n{"text": " New. "}\n```', ("New.", ())),
        ('{"text": 3, "wrong_values": []}', None),
        ('{"text": "New.", "wrong_values": "x"}', None),
        ("[1, 2]", None),
        ("no json here", None),
    ],
)
def test_parse_rewrite(reply: str, parsed: tuple[str, tuple[str, ...]] | None) -> None:
    assert parse_rewrite(reply) == parsed
