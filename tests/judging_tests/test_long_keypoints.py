"""Long keypoints: token F1 over the best window, on both sides, numbers required; hand-computed values."""

from __future__ import annotations

import pytest

from tuner.judging import LexicalJudge, build_judge, normalize, parse_judge_config
from tuner.judging._overlap import best_window, token_f1
from tuner.backends import BackendResources

KEYPOINT = ("the first game was released on august 8 2014 via desura",)  # 11 tokens: "august 8 2014" → "2014 08 08"


def test_token_f1_by_hand() -> None:
    # overlap {released, august, 8} = 3; P = 3/4, R = 3/5 → F1 = 2·0.45/1.35 = 2/3
    assert token_f1(["released", "on", "august", "8"], ["first", "released", "august", "8", "2014"]) == pytest.approx(2 / 3)
    assert token_f1([], ["a"]) == 0.0 and token_f1(["a"], ["b"]) == 0.0


def test_best_window_slides_over_the_text() -> None:
    text = normalize("Noise words here. Cats like warm sunny windows. More noise.")
    # needle 4 tokens; the window "like warm sunny windows" shares 3 (warm, sunny, windows): F1 = 3/4
    match = best_window("warm sunny windows please", text)
    assert match is not None and match.f1 == pytest.approx(0.75)
    assert text.quote(*match.span) == "like warm sunny windows"
    # a text shorter than the needle is one window: overlap 2, F1 = 2·2 / (2 + 4) = 2/3
    short = best_window("warm sunny windows please", normalize("sunny windows"))
    assert short is not None and short.f1 == pytest.approx(2 / 3)


def test_a_window_without_every_number_of_the_keypoint_does_not_qualify() -> None:
    assert best_window("released in 1998 by cawthon", normalize("It was released in 2014 by Cawthon.")) is None
    match = best_window("released in 2014 by cawthon", normalize("It was released in 2014 by Cawthon."))
    assert match is not None and match.f1 == pytest.approx(1.0)


def test_a_long_keypoint_paraphrased_is_supported_on_both_sides() -> None:
    context = "Five Nights at Freddy's: the first game was released via Desura on August 8, 2014, to good reviews."
    answer = "The first game came out via Desura on August 8, 2014."
    verdict = LexicalJudge().judge("When?", answer, [context], [KEYPOINT], [])[0]
    # the answer is one 11-token window (the first game came out via desura on 2014 08 08); it shares 9 tokens
    # (all but was, released): F1 = 2·9 / (11 + 11) = 9/11 ≈ 0.82
    assert (verdict.answer, verdict.context) == ("supported", "supported")
    assert verdict.evidence.startswith('answer: "The first game came out via Desura on August 8, 2014"')


def test_a_long_keypoint_below_the_threshold_is_absent() -> None:
    answer = "A video game about a pizzeria, made by one developer, with many sequels and spin offs."
    assert LexicalJudge().judge("When?", answer, [], [KEYPOINT], [])[0].answer == "absent"
    # the paraphrase above with min_f1 = 0.9: F1 9/11 is not enough
    strict = LexicalJudge(min_f1=0.9).judge("When?", "The first game came out via Desura on August 8, 2014.", [], [KEYPOINT], [])
    assert strict[0].answer == "absent"


def test_a_long_wrong_value_contradicts_by_the_same_rule() -> None:
    wrong = ["the first game was developed in 1998 by dean hernandez in west timothyhaven"]
    answer = "The first game was developed in 1998 by Dean Hernandez, in West Timothyhaven."
    verdict = LexicalJudge().judge("When?", answer, [], [KEYPOINT], wrong)[0]
    assert verdict.answer == "contradicted" and "1998" in verdict.evidence


def test_short_keypoints_keep_exact_matching() -> None:
    # 5 tokens or fewer: whole-token exact match, a near miss is not enough
    judge = LexicalJudge()
    assert judge.judge("Q?", "It was released on August 9, 2014.", [], [("August 8, 2014",)], [])[0].answer == "absent"
    assert judge.judge("Q?", "Released August 8, 2014.", [], [("August 8, 2014",)], [])[0].answer == "supported"


def test_chinese_long_keypoint_matches_by_characters() -> None:
    # 退货期为三十天自收货之日起 → 退 货 期 为 30 天 自 收 货 之 日 起: 12 tokens; the answer's best 12-token window
    # (自 收 货 之 日 起 退 货 期 为 30 天) holds all of them in another order: F1 1.0
    verdict = LexicalJudge().judge("退货期多久？", "自收货之日起退货期为30天。", [], [("退货期为三十天自收货之日起",)], [])[0]
    assert verdict.answer == "supported"
    # the same sentence with 15天: the number 30 is missing from every window
    assert LexicalJudge().judge("退货期多久？", "自收货之日起退货期为15天。", [], [("退货期为三十天自收货之日起",)], [])[0].answer == "absent"


def test_thresholds_come_from_the_judge_config() -> None:
    judge = build_judge(parse_judge_config({"backend": "lexical", "long_keypoint_tokens": 3, "min_f1": 0.7}, "t"), BackendResources())
    assert isinstance(judge, LexicalJudge) and (judge.long_keypoint_tokens, judge.min_f1) == (3, 0.7)
