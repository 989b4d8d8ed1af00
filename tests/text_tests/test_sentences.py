from __future__ import annotations

import random

from tuner.text import SENTENCE_BREAK, sentence_breaks, sentence_spans, split_sentences


def test_english_sentences_are_split_as_before() -> None:
    assert split_sentences("First one. Second? Third!\nFourth") == ["First one.", "Second?", "Third!", "Fourth"]
    text = "Released on August 8 , 2014 . On August 20 it hit Steam! Why? 3 sequels followed.\nNew line"
    assert split_sentences(text) == [
        "Released on August 8 , 2014 .",
        "On August 20 it hit Steam!",
        "Why?",
        "3 sequels followed.",
        "New line",
    ]
    assert split_sentences("version 2.5 is out. ... ") == ["version 2.5 is out. ..."]
    assert split_sentences("It costs $5. $10 buys two.") == ["It costs $5.", "$10 buys two."]
    assert split_sentences("See e.g. the manual. Done") == ["See e.g. the manual.", "Done"]


def test_chinese_end_marks_split() -> None:
    assert split_sentences("今天下雨。明天晴！后天呢？大后天；再说") == ["今天下雨。", "明天晴！", "后天呢？", "大后天；", "再说"]


def test_closing_quotes_and_brackets_stay_with_their_sentence() -> None:
    text = "他说：「退货期是七天。」客服确认了。书名是《三体》。（注：见附录。）她问：“真的吗？”『好。』完"
    assert split_sentences(text) == [
        "他说：「退货期是七天。」",
        "客服确认了。",
        "书名是《三体》。",
        "（注：见附录。）",
        "她问：“真的吗？”",
        "『好。』",
        "完",
    ]


def test_repeated_end_marks_are_one_end() -> None:
    assert split_sentences("真的吗？！不会吧。。。好") == ["真的吗？！", "不会吧。。。", "好"]


def test_no_split_inside_a_chinese_sentence_at_commas_or_a_closer_without_end_mark() -> None:
    assert split_sentences("他读了「三体」，很喜欢，然后睡了。") == ["他读了「三体」，很喜欢，然后睡了。"]


def test_mixed_text_and_line_breaks() -> None:
    text = "Aurora X200售价5999元。It ships in 2 days.\n保修两年!详情见官网"
    assert split_sentences(text) == ["Aurora X200售价5999元。", "It ships in 2 days.", "保修两年!", "详情见官网"]


def test_spans_point_into_the_text_without_whitespace() -> None:
    text = "  第一句。 第二句！\n\n Third one.  "
    spans = sentence_spans(text)
    assert spans == [(2, 6), (7, 11), (14, 24)]
    assert [text[s:e] for s, e in spans] == ["第一句。", "第二句！", "Third one."]


def test_pieces_without_words_are_dropped() -> None:
    assert split_sentences("……。好。") == ["好。"]
    assert sentence_spans("") == []


def test_sentence_breaks_are_the_matches_finditer_finds() -> None:
    # every end mark, closer, space and line break of the pattern, between ideographs, letters and digits, with a seed
    marks = list("。！？；」』）”’》〉】〕)]\"'.!?") + ["\n", " ", "\t", "\u3000", "\r\n", "\u2028", "中", "文", "a", "A", "1", "$", "(", "…"]
    rng = random.Random(39)
    for _ in range(20_000):
        text = "".join(rng.choices(marks, k=rng.randint(0, 24)))
        assert [m.span() for m in sentence_breaks(text)] == [m.span() for m in SENTENCE_BREAK.finditer(text)], text
