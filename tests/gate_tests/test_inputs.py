"""Gate inputs validated at the edge: thresholds, baselines, noise floors, case lists, sampling."""

from __future__ import annotations

import json

from pathlib import Path

import pytest

from tuner.errors import UserError
from tuner.gate import GateThresholds, load_baseline, load_thresholds, read_case_list, select_cases


def test_default_thresholds_follow_the_mission() -> None:
    t = GateThresholds()
    assert (t.retrieval.recall_at_k, t.retrieval.hit_at_k) == (0.03, 0.02)
    assert (t.delta_faithful.warn, t.delta_faithful.fail) == (0.05, 0.15)
    assert t.category_limits("anything").fail == 0.20
    assert t.judge_check.min_agreement == 0.95


def test_thresholds_file_overrides_a_subset(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("retrieval: {mrr: 0.05}\ncategories: {critical: {fail: 0.10}}\n", "utf-8")
    t = load_thresholds(path)
    assert t.retrieval.mrr == 0.05 and t.retrieval.recall_at_k == 0.03
    assert t.category_limits("critical").fail == 0.10 and t.category_limits("critical").warn == 0.05
    assert t.category_limits("other").fail == 0.20


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("retrieval: {recal_at_k: 0.03}\n", "t.yaml: retrieval.recal_at_k: unknown key"),
        ("delta_faithful: {warn: 0.2, fail: 0.1}\n", "t.yaml: delta_faithful: warn (0.2) must not exceed fail (0.1)"),
        ("categories: {critical: {fail: 2}}\n", "t.yaml: categories.critical.fail: Input should be less than or equal to 1"),
        ("judge: {}\n", "t.yaml: judge: unknown key"),
        ("[1, 2]\n", "t.yaml: expected a mapping (gate thresholds)"),
        ("retrieval: {\n", "t.yaml:2: malformed YAML"),
    ],
)
def test_bad_thresholds_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(text, "utf-8")
    with pytest.raises(UserError) as info:
        load_thresholds(path)
    assert str(info.value).startswith(f"{tmp_path}/{message}")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "baseline not found"),
        ("{not json", "malformed baseline: not JSON"),
        ("[]", "malformed baseline: expected a JSON object"),
        ('{"format": 7}', "malformed baseline: format must be 1"),
        ('{"format": 1, "written_at": "x"}', "malformed baseline: tool_version: Field required"),
    ],
)
def test_bad_baseline_is_one_line_naming_the_file(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "baseline.json"
    if content is not None:
        path.write_text(content, "utf-8")
    with pytest.raises(UserError) as info:
        load_baseline(path)
    assert str(info.value).startswith(f"{path}: {message}")
    assert "\n" not in str(info.value)


def test_a_baseline_written_before_the_rename_still_reads(tmp_path: Path) -> None:
    fields = {"format": 1, "written_at": "2026-01-01T00:00:00+00:00", "tool_version": "0", "dataset_hash": "h",
              "settings": {}, "variants": ["v0", "v3"], "retrieval": {}, "faithful": {}, "summary": {}}
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({**fields, "noise": {"n": 2}}), "utf-8")
    assert load_baseline(path).variant_config == {"n": 2}
    path.write_text(json.dumps({**fields, "noise": {"n": 2}, "variant_config": {"n": 3}}), "utf-8")
    with pytest.raises(UserError, match="'noise' is the old spelling of 'variant_config'"):
        load_baseline(path)


def test_case_list_skips_comments_and_names_unknown_ids_by_line(tmp_path: Path) -> None:
    path = tmp_path / "known-bad.txt"
    path.write_text("# known bad cases\nq2\n\nq5  # regressed in March\n", "utf-8")
    assert read_case_list(path, ["q1", "q2", "q5"]) == ["q2", "q5"]
    path.write_text("q2\nq9\n", "utf-8")
    with pytest.raises(UserError, match=rf"^{path}:2: unknown case id 'q9'$"):
        read_case_list(path, ["q1", "q2"])


def test_sample_is_fixed_by_seed_keeps_dataset_order_and_adds_always_included() -> None:
    ids = [f"q{i}" for i in range(20)]
    first = select_cases(ids, 5, seed=3)
    assert first == select_cases(ids, 5, seed=3)
    assert len(first) == 5 and first == sorted(first, key=ids.index)
    assert first != select_cases(ids, 5, seed=4)
    extra = next(i for i in ids if i not in first)
    with_extra = select_cases(ids, 5, seed=3, always=[extra])
    assert set(with_extra) == {*first, extra}
    assert select_cases(ids, None) == ids and select_cases(ids, 50) == ids


def test_a_retrieval_metric_of_the_registry_is_gated_and_floored_without_another_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 53: the gate's limits and the noise floor's metrics come from ``tuner.metrics.RETRIEVAL_METRICS``."""
    from tuner.gate import _thresholds
    from tuner.metrics import RETRIEVAL_METRICS, RetrievalMetricEntry, hit_at_k
    from tuner.noisefloor import FLOOR_METRICS

    defaults = GateThresholds().retrieval.model_dump()
    assert list(defaults) == ["recall_at_k", "hit_at_k", "mrr", "context_precision"]
    assert defaults == {name: entry.gate_drop for name, entry in RETRIEVAL_METRICS.items()}
    assert set(RETRIEVAL_METRICS) < set(FLOOR_METRICS)
    monkeypatch.setitem(RETRIEVAL_METRICS, "hit_at_3", RetrievalMetricEntry(lambda ranked, relevant: hit_at_k(ranked[:3], relevant),
                                                                           gate_drop=0.04))
    limits = _thresholds._retrieval_limits()
    assert limits().model_dump()["hit_at_3"] == 0.04
    assert limits.model_validate({"hit_at_3": None}).model_dump()["hit_at_3"] is None
    with pytest.raises(ValueError, match="hit_at_4"):
        limits.model_validate({"hit_at_4": 0.1})


def test_an_unknown_retrieval_limit_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("retrieval: {recal_at_k: 0.05}\n", "utf-8")
    with pytest.raises(UserError, match=r"t.yaml: retrieval.recal_at_k"):
        load_thresholds(path)
