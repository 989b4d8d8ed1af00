"""Demo (dataset → **demo**): the English demo: Lumina Systems, a consumer electronics company, in plain English
documentation."""

from __future__ import annotations

from tuner.dataset.demo._language import Catalog, Language, Phrasing
from tuner.dataset.demo.en import _catalog, _company
from tuner.dataset.demo.en._company import FACT_WORDINGS
from tuner.dataset.demo.en._values import date


def _words(text: str) -> int:
    return len(text.split())


def _indefinite(label: str) -> str:
    return f"{'an' if label[0] in 'aeiou' else 'a'} {label}"


ENGLISH = Language(
    code="en",
    catalog=Catalog.of(_catalog, _company),
    phrasing=Phrasing(
        date=date, length=_words, length_unit="words", short_length=(70, 115), long_length=(360, 460),
        join=" ", avoid_page_figures=False, pronoun="it", indefinite=_indefinite, fact_wordings=FACT_WORDINGS,
        product_subject="the {model} {noun}",
        product_title="{model} {noun} product sheet",
        product_short="the {code}",
        release_subject="the {line} {season} firmware update",
        release_title="{line} {season} firmware release notes",
        release_short="the {line} {season} update",
        line_devices="{line} {noun}s",
        support_title="{line} support: {topic}",
        support_short="{line} devices",
        guide_title="{line} {guide}",
        policy_subject="the {policy} for {region}",
        policy_title="{company} {policy} ({region})",
        policy_short="the {topic} rules in {region}",
        region_devices="devices sold in {region}",
        region_handbook_title="{region} service handbook",
        handbook_title="{name} handbook",
        partner_title="{name}, our {role}",
        store_subject="{city} store",
        store_ref="the {city} store",
        store_title="{company} {city} store",
        store_short="the shop in {city}",
        plan_ref="the {plan} plan",
        plan_title="{plan} subscription",
        effective="Effective {date}.",
        edition="Edition of {date}.",
        archive_title="{company} archive {year}",
        heading="{heading}:",
        question_one="What is the {label} of {ref}?",
        question_same="What is the {label} of {ref_a} and of {ref_b}?",
        question_two="What is the {label_a} of {ref_a}, and what is the {label_b} of {ref_b}?",
    ),
)
