"""The Chinese demo: numerals and value forms, Chinese text and questions, and its entry points.

The guarantees both languages give (stale share, editions, keypoints, wrong values, namesakes) are
checked for both in test_demo.py.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from pathlib import Path

import pytest

from tuner.cli import main
from tuner.dataset import Dataset, generate_demo, load_dataset, resolve_dataset
from tuner.dataset._builtin import is_builtin
from tuner.dataset.demo import GENERATOR_VERSION, demo_records
from tuner.dataset.demo._values import Value
from tuner.dataset.demo.zh._values import chinese_count, chinese_number, date, percent, unit, wan, yuan
from tuner.errors import UserError

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    return generate_demo(tmp_path_factory.mktemp("demo-zh") / "seed0", 0, language="zh")


@pytest.mark.parametrize(
    ("n", "words"),
    [(0, "零"), (7, "七"), (10, "十"), (15, "十五"), (30, "三十"), (105, "一百零五"), (110, "一百一十"), (1001, "一千零一"),
     (3050, "三千零五十"), (1361, "一千三百六十一"), (100_000, "十万"), (20_010, "二万零一十"),
     (13_610_000, "一千三百六十一万")],
)  # fmt: skip
def test_chinese_number(n: int, words: str) -> None:
    assert chinese_number(n) == words


def test_chinese_count_says_liang_and_rejects_out_of_range() -> None:
    assert (chinese_count(2), chinese_count(12), chinese_count(20)) == ("两", "十二", "二十")
    with pytest.raises(ValueError):
        chinese_number(100_000_000)


def test_value_forms() -> None:
    assert unit("{n}天")(30) == Value("30天", ("30天", "三十天"), 30)
    assert unit("{n}个月")(2).aliases == ("2个月", "两个月")
    assert unit("{n}GB", "{n} GB", spoken=False)(64).aliases == ("64GB", "64 GB")
    assert percent(5) == Value("5%", ("5%", "百分之五"), 5)
    assert yuan(2999).text == "2999元" and "¥2999" in yuan(2999).aliases
    assert wan("用户")(1361) == Value("1361万用户", ("1361万用户", "1361万", "一千三百六十一万", "13,610,000"), 1361)
    ordinal = dt.date(2016, 9, 4).toordinal()
    assert date(ordinal) == Value("2016年9月4日", ("2016年9月4日", "2016-09-04"), ordinal)


def test_same_seed_same_bytes_other_seed_or_language_differs(tmp_path: Path) -> None:
    hashes = {name: generate_demo(tmp_path / name, seed, language=language).content_hash
              for name, seed, language in (("a", 0, "zh"), ("b", 0, "zh"), ("c", 1, "zh"), ("d", 0, "en"))}  # fmt: skip
    assert hashes["a"] == hashes["b"]
    assert len({hashes["a"], hashes["c"], hashes["d"]}) == 3


def test_validates_with_the_same_structure_as_the_english_demo(demo: Dataset) -> None:
    assert load_dataset(demo.path).content_hash == demo.content_hash
    corpus, golden, _conflicts = demo_records(0, "en")
    assert Counter(d.metadata["kind"] for d in demo.corpus) == Counter(d["metadata"]["kind"] for d in corpus)
    assert Counter(c.category for c in demo.golden) == Counter(c["category"] for c in golden)
    assert Counter(d.doc_id.split("-")[0] for d in demo.corpus) == Counter(d["doc_id"].split("-")[0] for d in corpus)


def test_documents_are_chinese_of_the_planned_length(demo: Dataset) -> None:
    lengths = [len(d.text) for d in demo.corpus]
    short = [n for n in lengths if n <= 600]
    assert len(short) == 264 and min(short) >= 200 and max(short) <= 360
    assert all(750 <= n <= 1100 for n in lengths if n > 600)
    assert all(len(CJK.findall(d.text)) > 0.4 * len(d.text) for d in demo.corpus)
    products = [d for d in demo.corpus if d.metadata["kind"] == "product"]
    assert all(re.search(r"[A-Z][a-z]+ [A-Z]\d{2}[\u4e00-\u9fff]", d.text) for d in products)


def test_questions_and_keypoints_use_chinese_forms(demo: Dataset) -> None:
    assert all(c.question.endswith("？") and CJK.search(c.question) for c in demo.golden)
    aliases = [alias for case in demo.golden for keypoint in case.keypoints for alias in keypoint]
    patterns = {
        "numeral duration": r"^[一二两三四五六七八九十百千]+(天|个月|小时|分钟|秒|个工作日)$",
        "percent": r"^百分之[一二三四五六七八九十]+$",
        "date": r"^\d{4}年\d{1,2}月\d{1,2}日$",
        "ten thousands": r"^\d+万",
        "price": r"^\d+元$",
    }
    for name, pattern in patterns.items():
        assert any(re.search(pattern, alias) for alias in aliases), name


def test_resolve_demo_zh_is_cached_by_language(tmp_path: Path) -> None:
    folder = resolve_dataset("demo-zh")
    assert folder.name == f"demo-zh-seed0-v{GENERATOR_VERSION}"
    assert resolve_dataset("demo-zh:0") == folder != resolve_dataset("demo")
    assert resolve_dataset("demo-zh:4").name == f"demo-zh-seed4-v{GENERATOR_VERSION}"
    with pytest.raises(UserError, match=r"demo-zh:SEED"):
        resolve_dataset("demo-zh:x")
    assert is_builtin("demo-zh:3") and is_builtin("demo") and not is_builtin("demo-fr") and not is_builtin(str(tmp_path))


def test_demo_data_command_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo-data", str(tmp_path / "kb"), "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "demo-zh (seed 0): 310 documents" in out and "characters; language and models in" in out
    kb = load_dataset(tmp_path / "kb")  # the README's Chinese setup starts from this file
    assert (kb.language, kb.language_source) == ("zh", "declared") and kb.model_defaults == {"embedding_model": "multilingual-e5-small"}
    assert "# embedding_model: BAAI/bge-small-zh-v1.5" in (tmp_path / "kb" / "dataset.yaml").read_text("utf-8")
    assert main(["demo-data", str(tmp_path / "fr"), "--lang", "fr"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "choose from en, zh" in err[0]
    assert not (tmp_path / "fr").exists()
    with pytest.raises(UserError, match="fr"):
        generate_demo(tmp_path / "fr", 0, language="fr")
