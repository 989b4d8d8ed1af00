from __future__ import annotations

import math
from typing import Any

import pytest

from tuner.embedding import CachedEncoder
from tuner.generation import (
    ABSTAIN,
    Answer,
    ExtractiveGenerator,
    ExtractiveGeneratorConfig,
    build_generator,
    parse_generator_config,
    position_bonus,
)
from tuner.generation._extractive import _idf
from tuner.backends import BackendResources

QUESTION = "How much does the Aurora X1 laptop cost?"
RIGHT = "The Aurora X1 laptop costs $1,299."
STALE = "The Aurora X1 laptop costs $1,199."


def generator(encoder: CachedEncoder, **values: Any) -> ExtractiveGenerator:
    built = build_generator(parse_generator_config(values, "study.yaml"), BackendResources(encoder=encoder))
    assert isinstance(built, ExtractiveGenerator)
    return built


def sentence_reader(encoder: CachedEncoder, **values: Any) -> ExtractiveGenerator:
    """The reader that answers with whole sentences (``reader: sentence``, the default), one unless
    ``max_sentences`` is given, so a test sees which sentence wins."""
    return generator(encoder, reader="sentence", **{"max_sentences": 1, **values})


def span_reader(encoder: CachedEncoder, **values: Any) -> ExtractiveGenerator:
    """The reader that answers with the typed span of the best sentence (``reader: span``)."""
    return generator(encoder, reader="span", **values)


def test_position_bonus_is_u_shaped() -> None:
    assert [round(position_bonus(i, 5, 0.04, 0.02), 6) for i in range(5)] == [0.04, 0.03, 0.02, 0.01, 0.02]
    assert position_bonus(0, 1, 0.04, 0.02) == pytest.approx(0.06)
    assert position_bonus(0, 2, 0.04, 0.02) == 0.04 and position_bonus(1, 2, 0.04, 0.02) == 0.02


def test_answers_with_the_best_sentence_deterministically(encoder: CachedEncoder) -> None:
    gen = sentence_reader(encoder)
    contexts = ["Aurora makes laptops in Oslo. " + RIGHT + " It weighs 1.2 kg.", "The weather in Oslo is mild."]
    first = gen.generate(QUESTION, contexts)
    assert first == Answer(RIGHT)
    assert all(gen.generate(QUESTION, contexts) == first for _ in range(3))
    assert gen.name == "extractive"


def test_adopts_a_conflicting_sentence_that_matches_better(encoder: CachedEncoder) -> None:
    stale_but_closer = "The Aurora X1 laptop costs $1,199 as of its launch."
    assert sentence_reader(encoder).generate(QUESTION, ["Pricing: the X1 is now 1,299 dollars.", stale_but_closer]) == Answer(
        stale_but_closer
    )


def test_abstains_on_unrelated_or_no_context(encoder: CachedEncoder) -> None:
    gen = sentence_reader(encoder)
    assert gen.generate(QUESTION, ["Penguins live in Antarctica. The ocean there is cold."]) == Answer(ABSTAIN)
    assert gen.generate(QUESTION, []) == Answer(ABSTAIN)
    assert sentence_reader(encoder, similarity_floor=-1.0).generate(QUESTION, ["Penguins live in Antarctica."]).text != ABSTAIN


def test_context_order_decides_close_calls(encoder: CachedEncoder) -> None:
    gen = sentence_reader(encoder, primacy_bonus=0.04, recency_bonus=0.0)
    scores = {s.text: s.similarity for s in gen.score(QUESTION, [RIGHT, STALE])}
    assert abs(scores[RIGHT] - scores[STALE]) < 0.04  # close enough for position to matter
    assert gen.generate(QUESTION, [RIGHT, STALE]) == Answer(RIGHT)
    assert gen.generate(QUESTION, [STALE, RIGHT]) == Answer(STALE)

    blind = sentence_reader(encoder, primacy_bonus=0.0, recency_bonus=0.0)
    assert blind.generate(QUESTION, [RIGHT, STALE]) == blind.generate(QUESTION, [STALE, RIGHT])


def test_recency_favours_the_last_context_over_the_middle(encoder: CachedEncoder) -> None:
    gen = sentence_reader(encoder, primacy_bonus=0.0, recency_bonus=0.04)
    filler = "Aurora was founded in Oslo."
    assert gen.generate(QUESTION, [filler, RIGHT, STALE]) == Answer(STALE)
    assert gen.generate(QUESTION, [filler, STALE, RIGHT]) == Answer(RIGHT)


def test_max_sentences(encoder: CachedEncoder) -> None:
    weight = "The Aurora X1 laptop weighs 1.2 kg."
    contexts = [f"{RIGHT} {weight} Penguins swim.", STALE]
    assert sentence_reader(encoder).generate(QUESTION, contexts) == Answer(RIGHT)
    assert sentence_reader(encoder, max_sentences=2).generate(QUESTION, contexts) == Answer(f"{RIGHT} {weight}")
    # the stale sentence scores above the weight, but comes from another context; the penguins are below the floor
    assert sentence_reader(encoder, max_sentences=5).generate(QUESTION, contexts) == Answer(f"{RIGHT} {weight}")


def test_sampling_is_seeded_and_reproducible(encoder: CachedEncoder) -> None:
    contexts = [RIGHT + " It ships with 16 GB of memory.", "The Aurora X1 laptop was priced at $1,199 in 2023."]
    samples = {}
    for seed in range(8):
        gen = sentence_reader(encoder, temperature=0.2, seed=seed)
        samples[seed] = gen.generate(QUESTION, contexts)
        assert sentence_reader(encoder, temperature=0.2, seed=seed).generate(QUESTION, contexts) == samples[seed]
        assert gen.generate(QUESTION, contexts) == samples[seed]  # independent of how many calls came before
    assert len(set(samples.values())) >= 2
    assert all(a.text in {RIGHT, "It ships with 16 GB of memory.", contexts[1]} for a in samples.values())


def test_embeddings_are_reused(encoder: CachedEncoder) -> None:
    gen = sentence_reader(encoder)
    gen.generate(QUESTION, ["A sentence seen once, about the Aurora X1 keyboard."])
    before = encoder.texts_encoded
    gen.generate(QUESTION, ["A sentence seen once, about the Aurora X1 keyboard."])
    assert encoder.texts_encoded == before


def test_default_config_is_extractive() -> None:
    config = parse_generator_config(None, "study.yaml")
    assert isinstance(config, ExtractiveGeneratorConfig) and config.temperature == 0.0 and config.reader == "sentence"
    assert (config.max_sentences, config.word_match, config.type_match) == (2, 0.6, 0.0)


def test_span_reader_commits_to_the_value_of_the_best_sentence(encoder: CachedEncoder) -> None:
    gen = span_reader(encoder)
    contexts = ["Aurora makes laptops in Oslo. " + RIGHT + " It weighs 1.2 kg.", "The weather in Oslo is mild."]
    assert gen.generate(QUESTION, contexts) == Answer("$1,299")
    stale_but_closer = "The Aurora X1 laptop costs $1,199 as of its launch."
    assert gen.generate(QUESTION, ["Pricing: the X1 is now 1,299 dollars.", stale_but_closer]) == Answer("$1,199")


def test_span_reader_keeps_position_sensitivity(encoder: CachedEncoder) -> None:
    gen = span_reader(encoder, primacy_bonus=0.04, recency_bonus=0.0)
    assert gen.generate(QUESTION, [RIGHT, STALE]) == Answer("$1,299")
    assert gen.generate(QUESTION, [STALE, RIGHT]) == Answer("$1,199")


def test_span_reader_answers_each_part_and_falls_back_to_sentences(encoder: CachedEncoder) -> None:
    gen = span_reader(encoder)
    weight = "The Aurora X1 laptop weighs 1.4 kg."
    question = "How much does the Aurora X1 laptop cost, and how much does the Aurora X1 laptop weigh?"
    assert gen.generate(question, [RIGHT + " " + weight]) == Answer("$1,299; 1.4 kg")
    # no type asked: the two best sentences, the better first
    why = "Why is the Aurora X1 laptop popular?"
    popular = "The Aurora X1 laptop is popular because it is light."
    liked = "Students like the Aurora X1 laptop."
    answer = gen.generate(why, [f"{liked} {popular} Penguins swim."]).text
    assert answer in {f"{popular} {liked}", f"{liked} {popular}"} and "Penguins" not in answer
    assert span_reader(encoder, span_fallback_sentences=1).generate(why, [f"{liked} {popular}"]).text in {popular, liked}
    # a number question over a sentence without a number: the sentence
    assert gen.generate("How much does the Aurora X1 laptop weigh?", ["The Aurora X1 laptop is very light."]) == Answer(
        "The Aurora X1 laptop is very light."
    )
    assert gen.generate(QUESTION, ["Penguins live in Antarctica."]) == Answer(ABSTAIN)


def test_idf_of_question_terms_over_the_sentences() -> None:
    # N = 3 sentences; "a" in 2: ln(1 + 1.5/2.5) = ln 1.6; "b" in 1: ln(1 + 2.5/1.5) = ln(8/3); "z" in none: ln(1 + 3.5/0.5) = ln 8
    idf = _idf({"a", "b", "z"}, [{"a"}, {"a", "b"}, {"c"}])
    assert idf == pytest.approx({"a": math.log(1.6), "b": math.log(8 / 3), "z": math.log(8)})


@pytest.mark.parametrize("reader", ["sentence", "span"])
def test_scores_idf_weighted_question_words(encoder: CachedEncoder, reader: str) -> None:
    # question terms {aurora, x1, laptop, cost}; the one sentence holds aurora, x1, laptop ("costs" is another term):
    # idf = ln(1 + 0.5/1.5) = ln(4/3) each, cost ln(1 + 1.5/0.5) = ln 4, so share = 3 ln(4/3) / (3 ln(4/3) + ln 4)
    question, contexts = "Aurora X1 laptop cost?", [RIGHT]
    share = 3 * math.log(4 / 3) / (3 * math.log(4 / 3) + math.log(4))
    [scored] = generator(encoder, reader=reader, primacy_bonus=0.0, recency_bonus=0.0).score(question, contexts)
    assert scored.score - scored.similarity == pytest.approx(0.6 * share)
    [plain] = generator(encoder, reader=reader, primacy_bonus=0.0, recency_bonus=0.0, word_match=0.0).score(question, contexts)
    assert plain.score == pytest.approx(plain.similarity)


def test_rare_question_words_outweigh_common_ones(encoder: CachedEncoder) -> None:
    # every sentence but one names the Aurora X1 laptop; only that one names the warranty the question asks
    # about. By share of terms (3 of 4 against 1 of 4) the fillers would win; by idf the warranty does.
    question = "Aurora X1 laptop warranty?"
    contexts = [
        "The Aurora X1 laptop is sold in Oslo.",
        "The Aurora X1 laptop costs $1,299.",
        "The Aurora X1 laptop weighs 1.2 kg.",
        "The Aurora X1 laptop comes in grey.",
        "Warranty: 24 months.",
    ]
    assert sentence_reader(encoder, word_match=0.0).generate(question, contexts) == Answer(contexts[1])
    assert sentence_reader(encoder).generate(question, contexts) == Answer(contexts[4])


def test_type_match_favours_sentences_holding_what_is_asked(encoder: CachedEncoder) -> None:
    question = "When was the Aurora X1 laptop released?"
    contexts = ["The Aurora X1 laptop is made in Oslo.", "It came out in March 2021."]
    plain = {s.text: s.score for s in sentence_reader(encoder).score(question, contexts)}
    typed = {s.text: s.score for s in sentence_reader(encoder, type_match=0.5).score(question, contexts)}
    assert typed[contexts[0]] == pytest.approx(plain[contexts[0]])
    assert typed[contexts[1]] == pytest.approx(plain[contexts[1]] + 0.5)


def test_default_reader_answers_with_two_sentences_of_one_context(encoder: CachedEncoder) -> None:
    gen = generator(encoder)
    weight = "The Aurora X1 laptop weighs 1.2 kg."
    assert gen.generate(QUESTION, [f"Penguins swim. {RIGHT} {weight}", "The weather in Oslo is mild."]) == Answer(f"{RIGHT} {weight}")
    # it commits to one source: the stale price of another context never joins the answer, and position
    # still decides which of two close sources that is
    ordered = generator(encoder, primacy_bonus=0.04, recency_bonus=0.0)
    assert ordered.generate(QUESTION, [RIGHT, STALE]) == Answer(RIGHT)
    assert ordered.generate(QUESTION, [STALE, RIGHT]) == Answer(STALE)
    # a question that asks two things: one sentence for each
    question = "How much does the Aurora X1 laptop cost, and how much does the Aurora X1 laptop weigh?"
    assert gen.generate(question, [RIGHT, "Aurora is based in Oslo. " + weight]) == Answer(f"{RIGHT}; {weight}")
