from __future__ import annotations

import pytest

from tuner.generation._span import answer_type, extract_span, question_parts


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When was the first Five Nights at Freddy's game created?", "date"),
        ("In which year did Persia become Iran?", "date"),
        ("What is the contract renewal date of Mercury Logistics?", "date"),
        ("How many countries does Aurora serve?", "number"),
        ("How much does the Aurora X1 laptop cost?", "number"),
        ("Who sings the theme tune for Only Fools and Horses?", "entity"),
        ("Where was Dead Men Tell No Tales filmed?", "entity"),
        ("What is the meaning of the song True?", "sentence"),
        ("杭州门店的开业日期是哪一天？", "date"),
        ("Aurora A70笔记本电脑的续航时间是多少？", "number"),
        ("上海门店的工作日开门时间是几点？", "number"),
        ("这款路由器是哪家公司生产的？", "entity"),
        ("退货政策为什么这样规定？", "sentence"),
    ],
)
def test_answer_type(question: str, kind: str) -> None:
    assert answer_type(question) == kind


def test_question_parts() -> None:
    assert question_parts("What is the renewal date of Vega, and what is the weight of the V62?") == [
        "What is the renewal date of Vega",
        "what is the weight of the V62?",
    ]
    assert question_parts("Vega保险的合同续约日期是哪一天？V96的续航时间又是多少？") == [
        "Vega保险的合同续约日期是哪一天？",
        "V96的续航时间又是多少？",
    ]
    assert question_parts("Quasar Q20投影仪和Q60的售价分别是多少？") == ["Quasar Q20投影仪的售价是多少？", "Q60的售价是多少？"]
    assert question_parts("Who wrote and directed Alien?") == ["Who wrote and directed Alien?"]
    assert question_parts("What is it? Why?") == ["What is it? Why?"]  # English: only ", and what ..." splits


@pytest.mark.parametrize(
    ("question", "sentence", "kind", "span"),
    [
        # Natural Questions tokenization, and the later date of the same sentence is farther from the question
        ("When was the first Five Nights at Freddy's game released?",
         "The first Five Nights at Freddy 's game was released via Desura on August 8 , 2014 , and on Steam on August 20 , 2014 .",
         "date", "August 8 , 2014"),
        ("When did the name Persia change to Iran?", "Persia was officially renamed Iran in 1935 by Reza Shah.", "date", "1935"),
        ("杭州门店的开业日期是哪一天？", "杭州门店于2022年3月21日开业，营业面积300平方米。", "date", "2022年3月21日"),
        # "X1" is a name, not the number 1; a currency amount takes no following word
        ("How much does the Aurora X1 laptop cost?", "The Aurora X1 laptop costs $1,299 since 2023.", "number", "$1,299"),
        ("How fast does the Atlas P10 print?", "The Atlas P10 printer prints 46 pages per minute in draft mode.", "number", "46 pages per minute"),
        ("How many people live there?", "About 3 of them moved; 1,200 people live there.", "number", "1,200 people"),
        ("Aurora A48笔记本电脑的售价是多少？", "Aurora A48笔记本电脑的官方售价为9999元，含税。", "number", "9999元"),
        ("保修期是多少？", "享受48个月的有限保修。", "number", "48个月"),
        ("标准配送时效是多少？", "标准配送时效为9个工作日。", "number", "9个工作日"),
        ("Mercury物流的年服务用户数是多少？", "Mercury物流每年服务1073万用户。", "number", "1073万用户"),
        ("重庆那家店的工作日开门时间是几点？", "重庆门店工作日上午7点开门，周末9点开门。", "number", "上午7点"),
        # the clause holding the question's words wins over a nearer value in another clause
        ("A48的续航时间是多少？", "保修期为24个月，续航时间（Aurora A48）：15小时。", "number", "15小时"),
        ("Who sings the theme tune for Only Fools and Horses?",
         "The theme tune of Only Fools and Horses was sung by John Sullivan.", "entity", "John Sullivan"),
        # a value the question itself names is not the answer
        ("When had the firm grown after its move in 1998?", "In 1998 the firm moved; by 2001 it had grown.", "date", "2001"),
    ],
)
def test_extract_span(question: str, sentence: str, kind: str, span: str) -> None:
    assert extract_span(question, sentence, answer_type(question)) == span
    assert answer_type(question) == kind


def test_no_span_of_the_asked_type() -> None:
    assert extract_span("When did it open?", "It opened after the war ended.", "date") is None
    assert extract_span("Why is the sky blue?", "Rayleigh scattering, 1871.", "sentence") is None
