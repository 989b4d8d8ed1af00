"""Plan the demo documents (which facts each states) and render current and stale texts from templates."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from tuner.dataset._demo_catalog import COMPANY, PRODUCT_COMMON, PRODUCT_LINES, RELEASE_ATTRS, SUPPORT_TOPICS, TODAY, Attr
from tuner.dataset._demo_company import (
    CITIES, FILLER, GUIDE_ATTRS, INTRO, PARTNER_ATTRS, PARTNERS, PLAN_ATTRS, PLANS, POLICIES, REGIONS, SECTIONS, STORE_ATTRS,
)
from tuner.dataset._demo_values import SEVERITIES, Value, date

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
SEASONS = ("spring", "summer", "autumn", "winter")


@dataclass
class Fact:
    attr: Attr
    value: Value


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
    stale: dict[str, Value] = field(default_factory=dict)
    severity: str = ""


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
            specs.append(DocSpec(f"prod-{line}-{prefix}{number}".lower(), f"{model} {noun} product sheet", subject, subject, "product", line, facts))
    return specs


def _line_docs(rng: random.Random) -> list[DocSpec]:
    specs = []
    for line, noun, _prefix, _specific in PRODUCT_LINES:
        plural = f"{line} {noun}s"
        for season in SEASONS:
            subject = f"the {line} {season} firmware update"
            specs.append(DocSpec(f"rel-{line}-{season}".lower(), f"{line} {season} firmware release notes", subject, subject, "release", line, _facts(rng, RELEASE_ATTRS)))
        for topic, attrs in SUPPORT_TOPICS:
            slug = topic.replace(" ", "-")
            specs.append(DocSpec(f"sup-{line}-{slug}".lower(), f"{line} support: {topic}", plural, plural, "support", line, _facts(rng, attrs)))
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
            specs.append(DocSpec(f"pol-{policy.split()[0]}-{region}".lower().replace(" ", "-"), f"{COMPANY} {policy} ({region})", subject, subject, "policy", region, _facts(rng, attrs)))
        subject = f"devices sold in {region}"
        specs.append(DocSpec(f"handbook-{region}".lower().replace(" ", "-"), f"{region} service handbook", subject, subject, "guide", region, _facts(rng, tuple(rng.sample(GUIDE_ATTRS, 6))), long=True))
    for name, role in ((f"{COMPANY} employee devices", "it"), (f"{COMPANY} reseller demo units", "reseller")):
        specs.append(DocSpec(f"handbook-{role}", f"{name} handbook", name, name, "guide", "company", _facts(rng, tuple(rng.sample(GUIDE_ATTRS, 6))), long=True))
    for name, role in PARTNERS:
        specs.append(DocSpec(f"partner-{name}".lower().replace(" ", "-"), f"{name}, our {role}", name, name, "partner", name.split()[0], _facts(rng, PARTNER_ATTRS)))
    for city in CITIES:
        subject = f"{city} store"
        specs.append(DocSpec(f"store-{city}".lower(), f"{COMPANY} {city} store", subject, f"the {subject}", "store", city, _facts(rng, STORE_ATTRS)))
    for plan in PLANS:
        specs.append(DocSpec(f"plan-{plan}".lower().replace(" ", "-"), f"{plan} subscription", plan, f"the {plan} plan", "plan", plan, _facts(rng, PLAN_ATTRS)))
    return specs


def plan_documents(rng: random.Random, stale_share: float = 0.36) -> list[DocSpec]:
    """All documents, with effective dates and, for ``stale_share`` of them, older values to contradict."""
    specs = _products(rng) + _line_docs(rng) + _company_docs(rng)
    for spec in specs:
        spec.effective = TODAY - rng.randint(1, 29)
    for spec in rng.sample(specs, round(len(specs) * stale_share)):
        spec.severity = rng.choice(SEVERITIES)
        changed = rng.sample(spec.facts, min(len(spec.facts), rng.randint(1, 2)))
        for fact in changed:
            spec.stale[fact.attr.key] = fact.attr.quantity.stale(rng, fact.value, spec.severity)
    return specs


def _cap(sentence: str) -> str:
    return sentence[0].upper() + sentence[1:]


def render(spec: DocSpec, rng: random.Random, *, stale: bool) -> str:
    """Text of the current document, or (``stale``) of its older edition with other wording and order."""
    facts = list(spec.facts)
    if stale:
        rng.shuffle(facts)
        effective = date(spec.effective - rng.randint(150, 700)).text
        head = [f"{spec.title}, edition of {effective}."]
        sentences = [_cap(f.attr.stale_sentence.format(s=spec.subject, v=spec.stale.get(f.attr.key, f.value).text)) for f in facts]
        return " ".join(head + sentences + [rng.choice(FILLER)])
    head = [rng.choice(INTRO).format(company=COMPANY), f"Effective {date(spec.effective).text}."]
    sentences = [_cap(f.attr.sentence.format(s=spec.subject, v=f.value.text)) for f in facts]
    target = rng.randint(370, 540) if spec.long else rng.randint(80, 150)
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
