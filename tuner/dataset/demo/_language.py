"""Demo (dataset → **demo**): what the demo generator needs from a language: the company it describes and how it words
things.

The generator (planning, stale editions, question kinds, seeding) is one piece of code; a language is
data — a :class:`Catalog` of entities and the facts they state, and a :class:`Phrasing` of templates
and value forms. English and Chinese are two such data sets (``demo.en``, ``demo.zh``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from types import ModuleType
from typing import Any

from tuner.dataset.demo._values import Formatter, Quantity


@dataclass(frozen=True)
class Attr:
    """A fact a document states: question ``label``, how values are drawn, and a current and an older wording.

    ``sentence`` and ``stale_sentence`` are templates over ``{s}`` (the subject) and ``{v}`` (the value);
    ``ask`` is the question word a language needs to ask for it (Chinese 多少 / 哪一天), empty where the
    language's question template has no slot for it.
    """

    key: str
    label: str
    quantity: Quantity
    sentence: str
    stale_sentence: str
    ask: str = ""


@dataclass(frozen=True)
class Name:
    """A named entity: ``text`` as written in documents, ``key`` the ASCII name its document id is built from."""

    key: str
    text: str


@dataclass(frozen=True)
class Topic:
    """A subject with its own facts (a policy, a support topic); ``short`` is the word a looser reference uses."""

    name: Name
    attrs: tuple[Attr, ...]
    short: str = ""


@dataclass(frozen=True)
class ProductLine:
    """A product line: ``line`` is its brand (``Nimbus``, also the family of namesake partners), ``noun`` what it
    is, ``prefix`` the letter of its model codes, ``specific`` the facts only this line states."""

    line: str
    noun: str
    prefix: str
    specific: tuple[Attr, ...]


@dataclass(frozen=True)
class Catalog:
    """The fictional company of one language: what exists and which facts each document states.

    Every language lists the same number of entities of each kind, so both demos have the same
    structure; ``product_common`` must hold an attribute keyed ``launch`` (redrawn per model) and
    ``guide_attrs`` at least four per entry of ``guides``.
    """

    company: str
    today: int
    """Day ordinal the demo is written on; effective dates fall in the month before it."""
    product_common: tuple[Attr, ...]
    product_lines: tuple[ProductLine, ...]
    release_attrs: tuple[Attr, ...]
    seasons: tuple[Name, ...]
    support_topics: tuple[Topic, ...]
    guides: tuple[Name, ...]
    guide_attrs: tuple[Attr, ...]
    regions: tuple[Name, ...]
    policies: tuple[Topic, ...]
    handbooks: tuple[Name, ...]
    """Company-wide handbooks; ``key`` is the audience (``it``, ``reseller``)."""
    partners: tuple[tuple[Name, str], ...]
    """(name, role); the first word of a partner's key is a product line on purpose: a namesake."""
    partner_attrs: tuple[Attr, ...]
    cities: tuple[Name, ...]
    store_attrs: tuple[Attr, ...]
    plans: tuple[Name, ...]
    plan_attrs: tuple[Attr, ...]
    intro: tuple[str, ...]
    filler: tuple[str, ...]
    """Sentences any document may carry; they hold no figures, so a value never appears by accident."""
    subject_filler: tuple[str, ...]
    guide_filler: tuple[str, ...]
    sections: tuple[str, ...]

    @classmethod
    def of(cls, *modules: ModuleType) -> Catalog:
        """The catalog a language package defines: field ``x`` is the module constant ``X``, looked up in
        ``modules`` (the first that has it wins)."""
        names: dict[str, Any] = {}
        for module in reversed(modules):
            names.update(vars(module))
        return cls(**{field.name: names[field.name.upper()] for field in fields(cls)})


@dataclass(frozen=True)
class Phrasing:
    """How one language words titles, references, sentences and questions (``str.format`` templates).

    Placeholders: ``{model} {noun} {code}`` products; ``{line} {season} {topic} {guide} {noun}`` per-line
    documents; ``{policy} {region}`` policies; ``{name} {role}`` partners and handbooks; ``{city}``
    stores; ``{plan}`` plans; ``{company} {date} {year} {heading}`` page furniture; ``{s} {label}
    {a_label} {v}`` fact wordings; ``{ref} {label} {ask}`` (``_a`` / ``_b`` suffixed for two) questions.
    """

    date: Formatter
    length: Callable[[str], int]
    """How long a text is in this language's unit (English words, Chinese characters)."""
    length_unit: str
    short_length: tuple[int, int]
    long_length: tuple[int, int]
    join: str
    """Between sentences: a space in English, nothing in Chinese."""
    avoid_page_figures: bool
    """Redraw an older value that occurs inside a current figure or the date of its page (``90元`` in ``990元``): on for
    Chinese, whose figures are not space-delimited. Off for English to keep its published output (see
    ``GENERATOR_VERSION``), although seeds 24, 27 and 57 (of 0-59) give a stale value equal to another current
    figure of the same page; turning it on fixes them (and changes seeds 23, 36, 46) at the cost of a version bump."""
    pronoun: str
    """Stands in for the subject in an older edition's terse sentences."""
    indefinite: Callable[[str], str]
    """``a_label`` of a fact wording (``an error code``)."""
    fact_wordings: tuple[str, ...]
    product_subject: str
    product_title: str
    product_short: str
    release_subject: str
    release_title: str
    release_short: str
    line_devices: str
    support_title: str
    support_short: str
    guide_title: str
    policy_subject: str
    policy_title: str
    policy_short: str
    region_devices: str
    region_handbook_title: str
    handbook_title: str
    partner_title: str
    store_subject: str
    store_ref: str
    store_title: str
    store_short: str
    plan_ref: str
    plan_title: str
    effective: str
    edition: str
    archive_title: str
    heading: str
    question_one: str
    question_same: str
    question_two: str


@dataclass(frozen=True)
class Language:
    """A demo language: ``code`` names it on the command line (``--lang zh``) and in dataset specs (``demo-zh``)."""

    code: str
    catalog: Catalog
    phrasing: Phrasing
