from __future__ import annotations

from tuner.judging import KeypointVerdict, LexicalJudge, build_judge, parse_judge_config, wrong_values_per_keypoint

QUESTION = "How much is the Aurora X1 and how long is its warranty?"
PRICE = ("$1,299", "1299 dollars")
WARRANTY = ("two-year warranty", "24-month warranty")
WRONG = ["$1,199", "one-year warranty"]


def judge(answer: str, contexts: list[str], keypoints: list[tuple[str, ...]] | None = None) -> list[KeypointVerdict]:
    return LexicalJudge().judge(QUESTION, answer, contexts, keypoints or [PRICE, WARRANTY], WRONG)


def test_supported_via_alias_and_number_formats() -> None:
    price, warranty = judge("It costs 1 299 dollars with a 24 month warranty.", ["The X1 is $1,299; 2 year warranty."])
    assert (price.answer, warranty.answer) == ("supported", "supported")
    assert price.evidence.startswith('answer: "1 299"')
    assert warranty.evidence == 'answer: "24 month warranty" | context[1]: "2 year warranty"'
    assert price.missing_reason is None


def test_contradicted_vs_absent_in_the_answer() -> None:
    price, warranty = judge("It is $1,199.", [])
    assert price.answer == "contradicted" and 'answer: "1,199" (wrong value)' in price.evidence
    assert warranty.answer == "absent"  # "$1,199" targets the price keypoint, not the warranty
    assert [v.answer for v in judge("I don't know.", [])] == ["absent", "absent"]
    assert judge("A one year warranty applies.", [])[1].answer == "contradicted"


def test_supported_wins_when_the_answer_states_both() -> None:
    price = judge("It is $1,299 (older pages say $1,199).", [])[0]
    assert price.answer == "supported"
    assert price.evidence == 'answer: "1,299"; also wrong value at answer: "1,199"'


def test_numbers_match_whole_tokens_only() -> None:
    assert judge("It costs $11,299.", [])[0].answer == "absent"


def test_word_numbers_and_percentages() -> None:
    verdicts = LexicalJudge().judge(
        "discount?", "A thirty percent discount for twenty-one days.", [], [("30%",), ("21 days",), ("40%",)], ["40%"]
    )
    assert [v.answer for v in verdicts] == ["supported", "supported", "absent"]


def test_dates_in_any_format() -> None:
    verdicts = LexicalJudge().judge(
        "when?", "It was released on 1 March 2024.", ["Launch: 2024-03-01."], [("March 1, 2024",)], ["2023-03-01"]
    )
    assert (verdicts[0].answer, verdicts[0].context) == ("supported", "supported")
    assert verdicts[0].evidence == 'answer: "1 March 2024" | context[1]: "2024-03-01"'
    stale = LexicalJudge().judge("when?", "March 1st, 2023.", [], [("March 1, 2024",)], ["2023-03-01"])
    assert stale[0].answer == "contradicted"


def test_context_verdicts() -> None:
    clean, conflicted, only_wrong, nothing = (
        judge("x", ["The X1 costs $1,299."])[0],
        judge("x", ["Old page: the X1 costs $1,199.", "Current: $1,299."])[0],
        judge("x", ["Filler about Oslo.", "The X1 costs $1,199."])[0],
        judge("x", ["Filler about Oslo."])[0],
    )
    assert clean.context == "supported" and clean.evidence.endswith('context[1]: "1,299"')
    assert conflicted.context == "supported"
    assert conflicted.evidence.endswith('context[2]: "1,299"; also wrong value at context[1]: "1,199"')
    assert only_wrong.context == "contradicted" and 'context[2]: "1,199" (wrong value)' in only_wrong.evidence
    assert nothing.context == "absent"


def test_empty_answer_is_missing_not_absent() -> None:
    verdict = judge("  ", ["The X1 costs $1,299."])[0]
    assert verdict == KeypointVerdict(None, "supported", 'context[1]: "1,299"', "empty_answer")


def test_wrong_values_are_attributed_to_the_most_similar_keypoint() -> None:
    assert wrong_values_per_keypoint([PRICE, WARRANTY], WRONG) == [["1199"], ["1 year warranty"]]
    assert wrong_values_per_keypoint([("Paris",)], ["Lyon", "paris"]) == [["lyon"]]


def test_registry_default() -> None:
    config = parse_judge_config(None, "study.yaml")
    assert config.backend == "lexical" and build_judge(config).name == "lexical"


ZH_KEYPOINTS = [("30天", "三十天"), ("2016年9月4日",)]
ZH_WRONG = ["15天", "2016年9月5日"]


def judge_zh(answer: str, contexts: list[str]) -> list[KeypointVerdict]:
    return LexicalJudge().judge("退货期多长？政策何时生效？", answer, contexts, ZH_KEYPOINTS, ZH_WRONG)


def test_chinese_keypoints_are_found_inside_chinese_sentences() -> None:
    window, date = judge_zh("退货期为30天，自2016-09-04起生效。", ["本店退货期为三十天内。该政策于二〇一六年九月四日生效。"])
    assert (window.answer, window.context, date.answer, date.context) == ("supported",) * 4
    assert window.evidence == 'answer: "30天" | context[1]: "三十天"'
    assert date.evidence == 'answer: "2016-09-04" | context[1]: "二〇一六年九月四日"'


def test_chinese_wrong_values_contradict_in_answer_and_context() -> None:
    window, date = judge_zh("可以在15天内退货，政策自2016年9月5日起。", ["旧版：退货期为十五天。", "与退货无关的说明。"])
    assert (window.answer, date.answer) == ("contradicted", "contradicted")
    assert window.evidence == 'answer: "15天" (wrong value) | context[1]: "十五天" (wrong value)'
    assert window.context == "contradicted" and date.context == "absent"


def test_chinese_wrong_values_are_attributed_by_similarity() -> None:
    assert wrong_values_per_keypoint(ZH_KEYPOINTS, ZH_WRONG) == [["15 天"], ["2016 09 05"]]


def test_chinese_numbers_in_any_form_and_no_false_numbers() -> None:
    verdicts = LexicalJudge().judge(
        "q", "观众约一千三百六十一万人，占百分之五。他十分满意。", [], [("1361万",), ("5%",), ("10分",)], ["1200万"]
    )
    assert [v.answer for v in verdicts] == ["supported", "supported", "absent"]  # 十分 "very" is not 10
