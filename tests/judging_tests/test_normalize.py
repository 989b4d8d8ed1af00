from __future__ import annotations

import pytest

from tuner.judging import normalize


@pytest.mark.parametrize(
    ("forms", "canonical"),
    [
        (["1,299", "1 299", "1299", "$1,299", "1,299.00"], "1299"),
        (["2024-03-01", "March 1, 2024", "1 March 2024", "Mar. 1st 2024", "1st of March, 2024", "2024/3/1"], "2024 03 01"),
        (["August 8 , 2014", "8 August 2014"], "2014 08 08"),
        (["March 2024", "Mar 2024"], "2024 03"),
        (["thirty", "30", "Thirty"], "30"),
        (["twenty-one", "twenty one", "21"], "21"),
        (["30%", "30 %", "30 percent", "30 per cent", "thirty percent"], "30 percent"),
        (["3.50", "3.5"], "3 5"),
        (["Freddy's", "Freddy 's", "Freddy’s", "FREDDYS"], "freddys"),
        (["Café", "cafe"], "cafe"),
    ],
)
def test_equivalent_forms_meet(forms: list[str], canonical: str) -> None:
    assert {normalize(form).text for form in forms} == {canonical}


def test_may_the_verb_is_not_a_date() -> None:
    assert normalize("it may 5 times").text == "it may 5 times"
    assert normalize("May 5, 2020").text == "2020 05 05"


def test_matches_are_whole_tokens_and_quote_the_source() -> None:
    text = normalize("Now: $1,299 (was 12,990 or 299).")
    span = text.find("1299")
    assert span is not None and text.quote(*span) == "1,299"
    assert text.find("299") is not None and text.quote(*text.find("299")) == "299"  # type: ignore[misc]
    assert text.find("99") is None and text.find("") is None
    dated = normalize("Released on August 8 , 2014 . Later")
    assert dated.quote(*dated.find(normalize("8 Aug 2014").text)) == "August 8 , 2014"  # type: ignore[misc]
