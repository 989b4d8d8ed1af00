"""The report's language (issue 47 §6): a study whose golden cases are Chinese gets a Chinese report — headings, notes,
table headers, axis titles and the pick lines from one table per language — and English stays English; the study file's
``report_language`` overrides the cases. The labels' summary and pooling caveat follow the report's language."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import optuna
import pytest
import yaml

from tests.text_tests.zh_fixture import DOCS, QUERIES
from tuner.cli import main
from tuner.dataset import PROVENANCE, SUMMARY_TEXTS, LabelProvenance, write_dataset
from tuner.front import REPORT_TEXTS, StudyRecord

pytestmark = pytest.mark.slow  # the module's Chinese study takes tens of seconds to run

ENGLISH_ONLY = ("1. Front", "Hypervolume history", "Picked configurations by category", "Labels:", "noise floor ε")
CHINESE = ("1. 帕累托前沿", "2. 超体积变化", "5. 选中配置（按类别）", "标注：", "噪声下限 ε", "试验")


REVIEWED = LabelProvenance(("bm25",), 10, cases=6, cases_found_by_search=1, labels_found_by_search=2, no_answer=1, rejected=1)
"""The chinese study's golden set as a review of a bm25 pool would have written it: bm25 at top_k ≤ 10 is pooled."""


def _page(study: Path) -> str:
    """The report of the study in ``study``, its scripts (plotly.js) left out: the words a reader sees."""
    page = (study / "out" / "zh" / "report.html").read_text("utf-8")
    return re.sub(r"<script.*?</script>", "", page, flags=re.DOTALL)


def _fields(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def test_every_text_has_both_languages_with_the_same_placeholders() -> None:
    english, chinese = REPORT_TEXTS["en"], REPORT_TEXTS["zh"]
    assert set(english) == set(chinese)
    assert {key: _fields(english[key]) for key in english} == {key: _fields(chinese[key]) for key in chinese}


@pytest.fixture(scope="module")
def chinese_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("zh-study")
    text = dict(DOCS)
    golden = [{"id": f"q{n}", "question": question, "ground_truth": text[doc], "keypoints": [text[doc][:8]],
               "relevant_doc_ids": [doc]} for n, (question, doc) in enumerate(QUERIES[:6])]
    conflicts = [{"doc_id": f"{doc}-old", "text": text[doc].replace(old, new), "conflicts_with": doc, "kind": "stale_version",
                  "severity": "moderate", "wrong_values": [new]}
                 for doc, old, new in (("return", "七天", "三天"), ("warranty", "两年", "一年"), ("member", "99元", "199元"))]
    write_dataset(folder / "kb", [{"doc_id": d, "text": t} for d, t in DOCS], golden, conflicts)
    (folder / "kb" / PROVENANCE).write_text(json.dumps(REVIEWED.to_dict()), "utf-8")
    (folder / "space.yaml").write_text(yaml.safe_dump({"top_k": {"type": "int", "low": 1, "high": 4}}))
    study = {"name": "zh", "dataset": str(folder / "kb"), "search_space": "space.yaml",
             # MiniLM named: the report's language is under test, not the Chinese default model (a conversion per worker)
             "settings": {"candidate_depth": 8, "chunk_unit": "chars", "chunk_size": 60, "retriever": "bm25",
                          "embedding_model": "all-MiniLM-L6-v2"},
             "budget": {"trials": 3}, "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0},
             "sampler": {"name": "random", "seed": 0}, "enqueue": [{"top_k": 1}, {"top_k": 4}], "output": "out"}
    (folder / "study.yaml").write_text(yaml.safe_dump(study, allow_unicode=True))
    assert main(["run", str(folder / "study.yaml")]) == 0
    return folder


def test_a_study_of_chinese_cases_gets_a_chinese_report(chinese_study: Path) -> None:
    stored = optuna.load_study(study_name="zh", storage=f"sqlite:///{chinese_study / 'out' / 'zh' / 'study.db'}")
    assert StudyRecord.from_study(stored).language == "zh"
    page = (chinese_study / "out" / "zh" / "report.html").read_text("utf-8")
    assert "帕累托前沿：召回率 recall@k 对 v3 忠实度下降 Δfaithful" in page  # the front figure's title (in its script)
    assert "召回率 recall@k（越大越好）" in page  # an axis title
    seen = _page(chinese_study)
    assert '<html lang="zh-CN">' in seen and all(text in seen for text in CHINESE)
    assert not any(text in seen for text in ENGLISH_ONLY)
    assert "无法与无效果区分" in seen  # a pick line
    assert "标注：标注来自对 bm25 候选池（深度 10）的审核：6 条案例，其中 1 条有在候选池外检索到的标注（2 个片段）" in seen
    assert "bm25 在 top_k 4 下是在 bm25 参与标注的问题上测得的（候选池深度 10）" in seen  # the pooling caveat


def test_the_study_file_can_ask_for_the_other_language(chinese_study: Path) -> None:
    path = chinese_study / "study.yaml"
    study = yaml.safe_load(path.read_text("utf-8"))
    path.write_text(yaml.safe_dump({**study, "report_language": "en"}, allow_unicode=True))
    assert main(["run", str(path)]) == 0  # the budget is spent: it writes the report again
    page = _page(chinese_study)
    assert '<html lang="en">' in page and all(text in page for text in ENGLISH_ONLY)
    assert not any(text in page for text in CHINESE[:3])
    assert REVIEWED.summary() in page and REVIEWED.summary() == REVIEWED.summary(SUMMARY_TEXTS)
    assert "labels from a review of a bm25 pool (depth 10): 6 cases, 1 with labels found by search outside the pool (2 chunks)" in page


def test_an_english_study_keeps_an_english_report(tmp_path: Path, tiny_dataset_dir: Path) -> None:
    from tests.study_tests.test_study import write_study

    path = write_study(tmp_path, tiny_dataset_dir, budget={"trials": 1}, pruning={"enabled": False})
    assert main(["run", str(path)]) == 0
    page = re.sub(r"<script.*?</script>", "", (tmp_path / "out" / "tiny" / "report.html").read_text("utf-8"), flags=re.DOTALL)
    assert '<html lang="en">' in page and all(text in page for text in ENGLISH_ONLY)
