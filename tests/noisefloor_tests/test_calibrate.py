from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.noisefloor_tests import random_answers
from tuner.cache import DiskCache
from tuner.noisefloor import NoiseFloor, calibrate, public_config, with_run_seed
from tuner.dataset import load_dataset
from tuner.embedding import CachedEncoder
from tuner.errors import UserError
from tuner.evaluation import Responder, RobustnessEvaluator
from tuner.evaluation.retrieval import conflict_exposure
from tuner.generation import ExtractiveGeneratorConfig, OpenAIGeneratorConfig, build_generator, parse_generator_config
from tuner.judging import LexicalJudgeConfig, LLMJudgeConfig, build_judge
from tuner.backends import BackendResources
from tuner.llm.testing import FakeChatServer
from tuner.variants import VariantsConfig
from tuner.retrieval import RetrievalPipeline
from tuner.settings import RetrievalSettings
from tuner.stats import bootstrap_sd, min_detectable_difference

SETTINGS = RetrievalSettings(chunk_size=40, top_k=3)
RETRIEVAL = ("hit_at_k", "mrr", "recall_at_k", "context_precision")


@pytest.fixture(scope="module")
def pipeline(tiny_dataset_dir: Path, tmp_path_factory: pytest.TempPathFactory, encoder: CachedEncoder) -> RetrievalPipeline:
    cache = DiskCache(tmp_path_factory.mktemp("calibration-cache"))
    return RetrievalPipeline(load_dataset(tiny_dataset_dir), cache=cache, encoder=encoder)


def _resources(tmp_path: Path, encoder: CachedEncoder) -> BackendResources:
    return BackendResources(cache_path=tmp_path / "calls.sqlite", encoder=encoder)


def _calibrate(pipeline: RetrievalPipeline, resources: BackendResources, generator: Any, judge: Any, runs: int = 3) -> NoiseFloor:
    return calibrate(pipeline, SETTINGS, generator, judge, VariantsConfig(), runs, resources)


def test_offline_backends_leave_only_case_sampling_noise(
    pipeline: RetrievalPipeline, tmp_path: Path, encoder: CachedEncoder
) -> None:
    floor = _calibrate(pipeline, _resources(tmp_path, encoder), ExtractiveGeneratorConfig(), LexicalJudgeConfig())
    assert set(floor.objectives) == {*RETRIEVAL, "conflict_exposure", "faithful_v0", "faithful_v3", "v3_delta_faithful"}
    for name, part in floor.components.items():
        assert (part.run_sd, part.judge_var, part.generator_var) == (0.0, 0.0, 0.0), name
        assert part.judge_share is None and part.generator_share is None
        assert floor.objectives[name] == min_detectable_difference(0.0, part.bootstrap_sd)
        assert (part.n, part.n_total) == (6, 6)
    # the tiny set's faithfulness differs between cases, so the bootstrap part is real
    assert floor.components["faithful_v0"].bootstrap_sd > 0
    assert floor.objectives["faithful_v0"] > 0
    assert floor.calls["generator"] > 0 and floor.calls["judge"] > 0
    # conflict exposure is measured as recall@k is: its run-to-run part is 0, its floor the case-sampling term of
    # the per-case exposure flags (some of the tiny set's cases are shown a conflicting chunk at top_k 3, some not)
    flags = conflict_exposure(pipeline, SETTINGS)
    assert flags is not None and 0 < sum(flags) < len(flags)
    assert floor.components["conflict_exposure"].bootstrap_sd == bootstrap_sd([float(f) for f in flags]) > 0
    assert floor.run_sd()["conflict_exposure"] == floor.run_margins()["conflict_exposure"] == 0.0


def test_a_random_generator_puts_the_run_noise_in_the_generator_share(
    pipeline: RetrievalPipeline, tmp_path: Path, encoder: CachedEncoder
) -> None:
    random_answers.reset(11)
    generator = parse_generator_config({"backend": "callable", "function": f"{random_answers.__name__}:answer"}, "test")
    floor = _calibrate(pipeline, _resources(tmp_path, encoder), generator, LexicalJudgeConfig(), runs=4)
    for name in ("faithful_v0", "faithful_v3"):
        part = floor.components[name]
        assert part.judge_var == 0.0 and part.generator_var > 0, name
        assert (part.judge_share, part.generator_share) == (0.0, 1.0)
        assert part.run_sd > 0
        assert floor.objectives[name] == pytest.approx(min_detectable_difference(part.run_sd, part.bootstrap_sd))
    assert floor.components["recall_at_k"].run_sd == 0.0


def test_run_0_through_the_study_responder_gives_the_same_floor_and_its_answers_to_the_baseline_trial(
    pipeline: RetrievalPipeline, tmp_path: Path, encoder: CachedEncoder
) -> None:
    generator = parse_generator_config({"backend": "callable", "function": f"{random_answers.__name__}:answer"}, "test")
    judge = LexicalJudgeConfig()
    resources = _resources(tmp_path, encoder)
    random_answers.reset(5)
    alone = calibrate(pipeline, SETTINGS, generator, judge, VariantsConfig(), 3, resources)
    random_answers.reset(5)
    study_responder = Responder(build_generator(generator, resources), build_judge(judge, resources))
    shared = calibrate(pipeline, SETTINGS, generator, judge, VariantsConfig(), 3, resources, responder=study_responder)
    assert shared.to_dict() == alone.to_dict()
    assert shared.components["faithful_v0"].generator_var > 0  # the runs differ, so equal floors are not trivial
    answered = study_responder.calls()
    again = RobustnessEvaluator(pipeline, study_responder, VariantsConfig()).evaluate(SETTINGS, ("v0", "v3"))
    assert study_responder.calls() == answered  # the baseline trial re-answers nothing
    assert len(again) == len(pipeline.dataset.golden)
    fresh = Responder(build_generator(generator, resources), build_judge(judge, resources))
    RobustnessEvaluator(pipeline, fresh, VariantsConfig()).evaluate(SETTINGS, ("v0", "v3"))
    assert fresh.calls()["generator"] > 0  # without the shared memo the same evaluation answers again


def _seeded_verdicts(body: dict[str, Any]) -> str:
    """A judge endpoint whose yes/no flips with the request's seed, like a judge at temperature > 0."""
    digest = hashlib.sha256(json.dumps([body.get("seed"), body["messages"]]).encode()).digest()
    return json.dumps({"verdict": "supported" if digest[0] % 2 else "absent", "evidence": ""})


def test_a_noisy_judge_is_measured_by_rejudging_the_same_answers(
    pipeline: RetrievalPipeline, tmp_path: Path, encoder: CachedEncoder
) -> None:
    with FakeChatServer(_seeded_verdicts) as server:
        judge = LLMJudgeConfig(base_url=server.url, model="fake-judge", api_key_env=None, seed=100)
        floor = _calibrate(pipeline, _resources(tmp_path, encoder), ExtractiveGeneratorConfig(), judge, runs=3)
        seeds = {request.body.get("seed") for request in server.requests}
    assert seeds == {100, 101, 102}
    # the extractive generator repeats itself, so every bit of run-to-run variance is the judge's
    part = floor.components["faithful_v0"]
    assert part.judge_var > 0 and part.generator_var == 0.0
    assert (part.judge_share, part.generator_share) == (1.0, 0.0)


def test_cases_missing_in_any_run_are_left_out_and_counted_by_reason(
    pipeline: RetrievalPipeline, tmp_path: Path, encoder: CachedEncoder
) -> None:
    random_answers.reset(3)
    generator = parse_generator_config({"backend": "callable", "function": f"{random_answers.__name__}:answer_or_fail"}, "t")
    floor = _calibrate(pipeline, _resources(tmp_path, encoder), generator, LexicalJudgeConfig(), runs=2)
    part = floor.components["v3_delta_faithful"]
    assert (part.n, part.n_total, part.missing) == (5, 6, {"backend_error": 1})
    assert floor.components["recall_at_k"].n == 6


def test_retrieval_only_dataset_gets_a_floor_for_retrieval_metrics(
    tiny_dataset_dir: Path, tmp_path: Path, encoder: CachedEncoder
) -> None:
    folder = tmp_path / "retrieval-only"
    folder.mkdir()
    for name in ("corpus.jsonl", "conflicts.jsonl"):
        (folder / name).write_text((tiny_dataset_dir / name).read_text("utf-8"), "utf-8")
    golden = [json.loads(line) for line in (tiny_dataset_dir / "golden.jsonl").read_text("utf-8").splitlines()]
    (folder / "golden.jsonl").write_text("".join(json.dumps({**g, "keypoints": []}) + "\n" for g in golden), "utf-8")
    pipeline = RetrievalPipeline(load_dataset(folder), cache=DiskCache(tmp_path / "cache"), encoder=encoder)
    floor = _calibrate(pipeline, _resources(tmp_path, encoder), ExtractiveGeneratorConfig(), LexicalJudgeConfig(), runs=2)
    assert set(floor.objectives) == {*RETRIEVAL, "conflict_exposure"}
    assert set(floor.undefined) == {"faithful_v0", "faithful_v3", "v3_delta_faithful"}
    assert floor.calls["total"] == 0
    # without conflicting documents exposure has no floor, and the file says why
    (folder / "conflicts.jsonl").unlink()
    pipeline = RetrievalPipeline(load_dataset(folder), cache=DiskCache(tmp_path / "cache"), encoder=encoder)
    floor = _calibrate(pipeline, _resources(tmp_path, encoder), ExtractiveGeneratorConfig(), LexicalJudgeConfig(), runs=2)
    assert set(floor.objectives) == set(RETRIEVAL)
    assert floor.undefined["conflict_exposure"] == "the dataset has no conflicting documents"


def test_needs_two_runs(pipeline: RetrievalPipeline, tmp_path: Path, encoder: CachedEncoder) -> None:
    with pytest.raises(UserError, match="at least 2 runs"):
        _calibrate(pipeline, _resources(tmp_path, encoder), ExtractiveGeneratorConfig(), LexicalJudgeConfig(), runs=1)


def test_noise_floor_file_round_trip_and_bad_files(
    pipeline: RetrievalPipeline, tmp_path: Path, encoder: CachedEncoder
) -> None:
    floor = _calibrate(pipeline, _resources(tmp_path, encoder), ExtractiveGeneratorConfig(), LexicalJudgeConfig(), runs=2)
    path = tmp_path / "floor.json"
    floor.write(path)
    assert NoiseFloor.from_file(path) == floor
    data = json.loads(path.read_text("utf-8"))
    assert {"objectives", "components", "runs", "n_cases", "settings", "dataset_hash", "generator", "judge"} <= set(data)
    assert set(data["components"]["faithful_v0"]) >= {"run_sd", "bootstrap_sd", "judge_share", "generator_share"}
    data["noise"] = data.pop("variant_config")  # a floor written before issue 39
    path.write_text(json.dumps(data), "utf-8")
    assert NoiseFloor.from_file(path) == floor
    del data["components"]
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(UserError, match="floor.json: not a noise floor"):
        NoiseFloor.from_file(path)
    path.write_text("{", "utf-8")
    with pytest.raises(UserError, match="malformed JSON"):
        NoiseFloor.from_file(path)
    with pytest.raises(UserError, match="cannot read"):
        NoiseFloor.from_file(tmp_path / "absent.json")


def test_run_seeds_and_public_configs() -> None:
    assert with_run_seed(ExtractiveGeneratorConfig(seed=5), 0).seed == 5
    assert with_run_seed(ExtractiveGeneratorConfig(seed=5), 2).seed == 7
    remote = OpenAIGeneratorConfig(base_url="https://user:pw@llm.example:8443/v1", model="m")
    assert remote.seed is None and with_run_seed(remote, 0).seed is None and with_run_seed(remote, 1).seed == 1
    callable_config = parse_generator_config({"backend": "callable", "function": "m:f"}, "t")
    assert with_run_seed(callable_config, 3) is callable_config
    shown = public_config(remote)
    assert shown["base_url"] == "https://user:***@llm.example:8443/v1" and "pw" not in json.dumps(shown)
    assert shown["api_key_env"] == "OPENAI_API_KEY"


class _Recorder:
    """A reporter keeping its stage lines and how far each bar advanced (the terminal's bars, as data)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.bars: dict[str, list[int]] = {}

    def stage(self, message: str) -> None:
        self.lines.append(message)

    @contextmanager
    def task(self, description: str, total: int) -> Iterator[Any]:
        bar = self.bars.setdefault(description, [0, total])

        class _Bar:
            def advance(self, amount: int = 1) -> None:
                bar[0] += amount

        yield _Bar()


def test_calibration_shows_cases_answered_judged_and_texts_embedded_as_it_goes(
    pipeline: RetrievalPipeline, tmp_path: Path, encoder: CachedEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tuner.progress

    monkeypatch.setattr(tuner.progress, "PROGRESS_EVERY", 0.0)  # a line at every step instead of every few seconds
    reporter = _Recorder()
    random_answers.reset(3)
    generator = parse_generator_config({"backend": "callable", "function": f"{random_answers.__name__}:answer"}, "test")
    calibrate(pipeline, SETTINGS, generator, LexicalJudgeConfig(), VariantsConfig(), 2, _resources(tmp_path, encoder), reporter)
    steps = 2 * 6 * 2  # an answer and a verdict per case (6) and variant (v0, v3)
    assert reporter.bars == {"noise floor: regenerating answers": [2 * steps, 2 * steps],
                             "noise floor: re-judging the answers of run 0": [2 * steps, 2 * steps]}
    pattern = re.compile(r"noise floor: regenerating answers: run 1/2: (\d+)/6 cases answered, (\d+) judged, "
                         r"(\d+) texts embedded$")
    counts = [tuple(int(g) for g in m.groups()) for line in reporter.lines if (m := pattern.match(line))]
    assert len(counts) == steps  # one line per step here
    assert counts == sorted(counts)  # every count only grows
    assert counts[steps // 2 - 1][:2] == (6, 0) and counts[-1][:2] == (6, 6)  # all answered, then all judged
    assert "noise floor: regenerating answers: run 2/2 done (6 cases, " in "\n".join(reporter.lines)

