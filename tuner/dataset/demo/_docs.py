"""Plan the demo documents (which facts each states) and render current and stale texts from templates."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tuner.dataset.demo._catalog import COMPANY, PRODUCT_COMMON, PRODUCT_LINES, RELEASE_ATTRS, SUPPORT_TOPICS, TODAY, Attr
from tuner.dataset.demo._company import (
    CITIES, FILLER, GUIDE_ATTRS, INTRO, PARTNER_ATTRS, PARTNERS, PLAN_ATTRS, PLANS, POLICIES, REGIONS, SECTIONS, STORE_ATTRS,
)
from tuner.dataset.demo._values import SEVERITIES, Value, date, distinct

SUBJECT_FILLER = (
    "{s} is designed and tested by {company}.",
    "Questions about {s} are answered by the support team.",
    "The details below describe {s} as currently sold.",
    "Earlier documentation about {s} may list different figures.",
    "Retail partners receive the same information about {s}.",
    "Customers comparing {s} with similar models should check every figure.",
)
GUIDE_FILLER = (
    "Unpack {s} on a clean, flat surface and check that every accessory listed on the box is present.",
    "Connect {s} to a grounded outlet and wait until the status light turns steady.",
    "Register {s} in the customer portal so that warranty and update notices reach you.",
    "Clean the housing with a dry, lint-free cloth and avoid sprays or solvents.",
    "If the status light blinks amber, disconnect the power and reconnect it after a short pause.",
    "Keep ventilation openings free of dust, paper and fabric at all times.",
    "Before shipping a unit for service, back up personal data and remove removable media.",
    "Do not open the housing; there are no user-serviceable parts inside.",
    "Use only chargers and cables approved for {s}.",
    "Children should use {s} only under adult supervision.",
    "When the device is not used for several weeks, disconnect it from mains power.",
    "Technicians follow a documented checklist for every repair and record the result.",
    "Replacement parts are genuine parts or parts of equal quality and performance.",
    "Dispose of batteries according to local recycling rules, never with household waste.",
    "Interference from microwave ovens or cordless phones can reduce wireless performance.",
    "Administrators can manage settings for many units at once from the management console.",
    "A diagnostic report can be created from the settings menu and attached to a support ticket.",
    "Any change to the safety features voids the certification of {s}.",
)
FACT_WORDINGS = (
    "The {label} of {s} is {v}.",
    "For {s}, the {label} is {v}.",
    "{s} has {a_label} of {v}.",
    "{label} of {s}: {v}.",
)
SEASONS = ("spring", "summer", "autumn", "winter")
STALE_SHARE = 0.30
MIN_EDITIONS, MAX_EDITIONS = 2, 3
EDITION_FILLER = 7


@dataclass
class Fact:
    attr: Attr
    value: Value


@dataclass
class Edition:
    """An older edition of a document: its effective day and the facts it states with an older value."""

    effective: int
    values: dict[str, Value]


@dataclass
class DocSpec:
    """A planned document: ``subject`` names it inside sentences, ``ref`` inside questions."""

    doc_id: str
    title: str
    subject: str
    ref: str
    kind: str
    family: str
    facts: list[Fact]
    long: bool = False
    effective: int = 0
    editions: list[Edition] = field(default_factory=list)
    severity: str = ""
    short: str = ""
    """A looser name some questions use instead of ``ref``, as users do (``the A84``, ``Care Plus``)."""

    def stale_values(self, key: str) -> list[Value]:
        """Every older value of fact ``key`` across the editions, newest edition first, without repeats."""
        values = {e.values[key].text: e.values[key] for e in self.editions if key in e.values}
        return list(values.values())


def _facts(rng: random.Random, attrs: tuple[Attr, ...]) -> list[Fact]:
    return [Fact(a, a.quantity.draw(rng)) for a in attrs]


def _products(rng: random.Random) -> list[DocSpec]:
    specs = []
    for line, noun, prefix, specific in PRODUCT_LINES:
        attrs = PRODUCT_COMMON + specific
        base = _facts(rng, attrs)
        for number in sorted(rng.sample(range(10, 100, 2), 4)):
            model = f"{line} {prefix}{number}"
            facts = [Fact(f.attr, f.value) for f in base]
            # Variants share most figures: near-duplicates that differ in price and a couple of specs.
            for index in {0, *rng.sample(range(1, len(facts)), 2)}:
                facts[index] = Fact(facts[index].attr, facts[index].attr.quantity.near(rng, base[index].value))
            facts[3] = Fact(facts[3].attr, facts[3].attr.quantity.draw(rng))
            subject = f"the {model} {noun}"
            specs.append(DocSpec(f"prod-{line}-{prefix}{number}".lower(), f"{model} {noun} product sheet", subject, subject, "product", line, facts, short=f"the {prefix}{number}"))
    return specs


def _line_docs(rng: random.Random) -> list[DocSpec]:
    specs = []
    for line, noun, _prefix, _specific in PRODUCT_LINES:
        plural = f"{line} {noun}s"
        for season in SEASONS:
            subject = f"the {line} {season} firmware update"
            specs.append(DocSpec(f"rel-{line}-{season}".lower(), f"{line} {season} firmware release notes", subject, subject, "release", line, _facts(rng, RELEASE_ATTRS), short=f"the {line} {season} update"))
        for topic, attrs in SUPPORT_TOPICS:
            slug = topic.replace(" ", "-")
            specs.append(DocSpec(f"sup-{line}-{slug}".lower(), f"{line} support: {topic}", plural, plural, "support", line, _facts(rng, attrs), short=f"{line} devices"))
        guide_attrs = list(GUIDE_ATTRS)
        rng.shuffle(guide_attrs)
        for index, guide in enumerate(("user guide", "installation guide", "safety manual")):
            attrs = tuple(guide_attrs[index * 4:(index + 1) * 4])
            specs.append(DocSpec(f"guide-{line}-{guide.replace(' ', '-')}".lower(), f"{line} {guide}", plural, plural, "guide", line, _facts(rng, attrs), long=True))
    return specs


def _company_docs(rng: random.Random) -> list[DocSpec]:
    specs = []
    for region in REGIONS:
        for policy, attrs in POLICIES:
            subject = f"the {policy} for {region}"
            specs.append(DocSpec(f"pol-{policy.split()[0]}-{region}".lower().replace(" ", "-"), f"{COMPANY} {policy} ({region})", subject, subject, "policy", region, _facts(rng, attrs), short=f"the {policy.split()[0]} rules in {region}"))
        subject = f"devices sold in {region}"
        specs.append(DocSpec(f"handbook-{region}".lower().replace(" ", "-"), f"{region} service handbook", subject, subject, "guide", region, _facts(rng, tuple(rng.sample(GUIDE_ATTRS, 6))), long=True))
    for name, role in ((f"{COMPANY} employee devices", "it"), (f"{COMPANY} reseller demo units", "reseller")):
        specs.append(DocSpec(f"handbook-{role}", f"{name} handbook", name, name, "guide", "company", _facts(rng, tuple(rng.sample(GUIDE_ATTRS, 6))), long=True))
    for name, role in PARTNERS:
        specs.append(DocSpec(f"partner-{name}".lower().replace(" ", "-"), f"{name}, our {role}", name, name, "partner", name.split()[0], _facts(rng, PARTNER_ATTRS)))
    for city in CITIES:
        subject = f"{city} store"
        specs.append(DocSpec(f"store-{city}".lower(), f"{COMPANY} {city} store", subject, f"the {subject}", "store", city, _facts(rng, STORE_ATTRS), short=f"the shop in {city}"))
    for plan in PLANS:
        specs.append(DocSpec(f"plan-{plan}".lower().replace(" ", "-"), f"{plan} subscription", plan, f"the {plan} plan", "plan", plan, _facts(rng, PLAN_ATTRS), short=plan))
    return specs


def _plan_editions(rng: random.Random, spec: DocSpec) -> None:
    """``MIN_EDITIONS``..``MAX_EDITIONS`` older editions, about a year apart; each changes one or two facts to an older value.

    Figures drift over the editions (a price raised twice, a window shortened), so different editions
    can state different wrong values for the same fact: the more of them reach the context, the more
    chances one of them is picked over the current document.
    """
    spec.severity = rng.choice(SEVERITIES)
    changed = rng.sample(spec.facts, min(len(spec.facts), rng.randint(1, 2)))
    offsets = {fact.attr.key: 0 for fact in changed}
    effective = spec.effective
    for _ in range(rng.randint(MIN_EDITIONS, MAX_EDITIONS)):
        effective -= rng.randint(250, 450)
        values: dict[str, Value] = {}
        for fact in changed:
            taken = [fact.value, *spec.stale_values(fact.attr.key)]
            value, offsets[fact.attr.key] = fact.attr.quantity.stale(rng, fact.value, spec.severity, offsets[fact.attr.key])
            # A lower bound can fold a drift back onto an earlier value: drift once more.
            while not all(distinct(value, other) for other in taken):
                value, offsets[fact.attr.key] = fact.attr.quantity.stale(rng, fact.value, "subtle", offsets[fact.attr.key])
            values[fact.attr.key] = value
        spec.editions.append(Edition(effective, values))


def plan_documents(rng: random.Random, stale_share: float = STALE_SHARE) -> list[DocSpec]:
    """All documents, with effective dates and, for ``stale_share`` of them, older editions to contradict."""
    specs = _products(rng) + _line_docs(rng) + _company_docs(rng)
    for spec in specs:
        spec.effective = TODAY - rng.randint(1, 29)
    for spec in rng.sample(specs, round(len(specs) * stale_share)):
        _plan_editions(rng, spec)
    return specs


def _cap(sentence: str) -> str:
    return sentence[0].upper() + sentence[1:]


def _fact_sentence(rng: random.Random, spec: DocSpec, attr: Attr, value: Value) -> str:
    """The fact in one of several wordings; every edition words its facts afresh, as rewrites do."""
    wordings = [w for w in (attr.sentence, *FACT_WORDINGS) if "{s}" in w]
    article = "an" if attr.label[0] in "aeiou" else "a"
    return _cap(rng.choice(wordings).format(s=spec.subject, label=attr.label, a_label=f"{article} {attr.label}", v=value.text))


def edition_title(edition: Edition) -> str:
    """Old editions live on in an export of the previous site under a generic title, not the page's own."""
    return f"{COMPANY} archive {date(edition.effective).text[-4:]}"


def render_edition(spec: DocSpec, edition: Edition, rng: random.Random) -> str:
    """Text of an older edition: its changed facts, an unchanged one in the older terse wording, and
    general boilerplate. It names its subject far less often than the current page, so it usually ranks
    below it, while its changed fact is worded as directly as the current one."""
    changed = [f for f in spec.facts if f.attr.key in edition.values]
    kept = [f for f in spec.facts if f.attr.key not in edition.values]
    sentences = [_fact_sentence(rng, spec, f.attr, edition.values[f.attr.key]) for f in changed]
    sentences += [_cap(f.attr.stale_sentence.format(s="it", v=f.value.text)) for f in rng.sample(kept, min(len(kept), 1))]
    rng.shuffle(sentences)
    filler = rng.sample(FILLER, EDITION_FILLER)
    cut = len(filler) // 2
    return " ".join([f"Edition of {date(edition.effective).text}.", *filler[:cut], *sentences, *filler[cut:]])


def render(spec: DocSpec, rng: random.Random) -> str:
    """Text of the current document."""
    facts = list(spec.facts)
    head = [rng.choice(INTRO).format(company=COMPANY), f"Effective {date(spec.effective).text}."]
    sentences = [_fact_sentence(rng, spec, f.attr, f.value) for f in facts]
    target = rng.randint(360, 460) if spec.long else rng.randint(70, 115)
    templates = SUBJECT_FILLER + GUIDE_FILLER if spec.long else SUBJECT_FILLER
    pool = [_cap(t.format(s=spec.subject, company=COMPANY)) for t in templates] + list(FILLER)
    rng.shuffle(pool)
    body: list[str] = []
    words = sum(len(s.split()) for s in head + sentences)
    # Fact sentences are spread evenly through the filler so long documents hold facts deep inside.
    slots = sorted(rng.sample(range(max(len(pool), len(sentences))), len(sentences)))
    fact_iter = iter(sentences)
    sections = iter(SECTIONS)
    for position in range(max(len(pool), len(sentences))):
        if spec.long and position % 6 == 0:
            heading = next(sections, None)
            if heading:
                body.append(f"{heading}:")
        if position in slots:
            body.append(next(fact_iter))
        elif position < len(pool) and words < target:
            body.append(pool[position])
            words += len(pool[position].split())
    return " ".join(head + body)
