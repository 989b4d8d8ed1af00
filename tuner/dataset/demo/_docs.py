"""Demo (dataset → **demo**): plan the demo documents (which facts each states) and render current and stale texts from
a language's templates."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from tuner.dataset.demo._language import Attr, Language
from tuner.dataset.demo._values import SEVERITIES, Value, distinct

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


def _slug(*parts: str) -> str:
    return "-".join(parts).lower().replace(" ", "-")


def _facts(rng: random.Random, attrs: tuple[Attr, ...]) -> list[Fact]:
    return [Fact(a, a.quantity.draw(rng)) for a in attrs]


def _products(rng: random.Random, lang: Language) -> list[DocSpec]:
    p = lang.phrasing
    specs = []
    for line in lang.catalog.product_lines:
        attrs = lang.catalog.product_common + line.specific
        launch = next(index for index, attr in enumerate(attrs) if attr.key == "launch")
        base = _facts(rng, attrs)
        for number in sorted(rng.sample(range(10, 100, 2), 4)):
            code = f"{line.prefix}{number}"
            model = f"{line.line} {code}"
            facts = [Fact(f.attr, f.value) for f in base]
            # Variants share most figures: near-duplicates that differ in price and a couple of specs.
            for index in {0, *rng.sample(range(1, len(facts)), 2)}:
                facts[index] = Fact(facts[index].attr, facts[index].attr.quantity.near(rng, base[index].value))
            facts[launch] = Fact(facts[launch].attr, facts[launch].attr.quantity.draw(rng))
            subject = p.product_subject.format(model=model, noun=line.noun)
            title = p.product_title.format(model=model, noun=line.noun)
            short = p.product_short.format(code=code)
            specs.append(DocSpec(_slug("prod", line.line, code), title, subject, subject, "product", line.line, facts, short=short))
    return specs


def _line_docs(rng: random.Random, lang: Language) -> list[DocSpec]:
    cat, p = lang.catalog, lang.phrasing
    specs = []
    for product in cat.product_lines:
        line = product.line
        devices = p.line_devices.format(line=line, noun=product.noun)
        for season in cat.seasons:
            subject = p.release_subject.format(line=line, season=season.text)
            title = p.release_title.format(line=line, season=season.text)
            short = p.release_short.format(line=line, season=season.text)
            specs.append(DocSpec(_slug("rel", line, season.key), title, subject, subject, "release", line, _facts(rng, cat.release_attrs), short=short))
        for topic in cat.support_topics:
            title = p.support_title.format(line=line, topic=topic.name.text)
            short = p.support_short.format(line=line)
            specs.append(DocSpec(_slug("sup", line, topic.name.key), title, devices, devices, "support", line, _facts(rng, topic.attrs), short=short))
        guide_attrs = list(cat.guide_attrs)
        rng.shuffle(guide_attrs)
        for index, guide in enumerate(cat.guides):
            attrs = tuple(guide_attrs[index * 4:(index + 1) * 4])
            title = p.guide_title.format(line=line, guide=guide.text)
            specs.append(DocSpec(_slug("guide", line, guide.key), title, devices, devices, "guide", line, _facts(rng, attrs), long=True))
    return specs


def _company_docs(rng: random.Random, lang: Language) -> list[DocSpec]:
    cat, p = lang.catalog, lang.phrasing
    company = cat.company
    specs = []
    for region in cat.regions:
        for policy in cat.policies:
            subject = p.policy_subject.format(policy=policy.name.text, region=region.text)
            title = p.policy_title.format(company=company, policy=policy.name.text, region=region.text)
            short = p.policy_short.format(topic=policy.short, region=region.text)
            specs.append(DocSpec(_slug("pol", policy.name.key, region.key), title, subject, subject, "policy", region.key, _facts(rng, policy.attrs), short=short))
        subject = p.region_devices.format(region=region.text)
        title = p.region_handbook_title.format(region=region.text)
        specs.append(DocSpec(_slug("handbook", region.key), title, subject, subject, "guide", region.key, _facts(rng, tuple(rng.sample(cat.guide_attrs, 6))), long=True))
    for handbook in cat.handbooks:
        title = p.handbook_title.format(name=handbook.text)
        specs.append(DocSpec(f"handbook-{handbook.key}", title, handbook.text, handbook.text, "guide", "company", _facts(rng, tuple(rng.sample(cat.guide_attrs, 6))), long=True))
    for partner, role in cat.partners:
        title = p.partner_title.format(name=partner.text, role=role)
        specs.append(DocSpec(_slug("partner", partner.key), title, partner.text, partner.text, "partner", partner.key.split()[0], _facts(rng, cat.partner_attrs)))
    for city in cat.cities:
        subject = p.store_subject.format(city=city.text)
        ref = p.store_ref.format(city=city.text)
        title = p.store_title.format(company=company, city=city.text)
        short = p.store_short.format(city=city.text)
        specs.append(DocSpec(_slug("store", city.key), title, subject, ref, "store", city.key, _facts(rng, cat.store_attrs), short=short))
    for plan in cat.plans:
        title = p.plan_title.format(plan=plan.text)
        ref = p.plan_ref.format(plan=plan.text)
        specs.append(DocSpec(_slug("plan", plan.key), title, plan.text, ref, "plan", plan.key, _facts(rng, cat.plan_attrs), short=plan.text))
    return specs


def _plan_editions(rng: random.Random, spec: DocSpec, page_figures: list[str]) -> None:
    """``MIN_EDITIONS``..``MAX_EDITIONS`` older editions, about a year apart; each changes one or two facts to an older value.

    Figures drift over the editions (a price raised twice, a window shortened), so different editions
    can state different wrong values for the same fact: the more of them reach the context, the more
    chances one of them is picked over the current document. An older value is also kept out of
    ``page_figures`` (written figures of the current page, ``990元``) so it is never found inside one (``90元``).
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
            while not all(distinct(value, other) for other in taken) or any(value.text in text for text in page_figures):
                value, offsets[fact.attr.key] = fact.attr.quantity.stale(rng, fact.value, "subtle", offsets[fact.attr.key])
            values[fact.attr.key] = value
        spec.editions.append(Edition(effective, values))


def plan_documents(rng: random.Random, lang: Language, stale_share: float = STALE_SHARE) -> list[DocSpec]:
    """All documents, with effective dates and, for ``stale_share`` of them, older editions to contradict."""
    specs = _products(rng, lang) + _line_docs(rng, lang) + _company_docs(rng, lang)
    for spec in specs:
        spec.effective = lang.catalog.today - rng.randint(1, 29)
    for spec in rng.sample(specs, round(len(specs) * stale_share)):
        page = [f.value.text for f in spec.facts] + [lang.phrasing.date(spec.effective).text]
        _plan_editions(rng, spec, page if lang.phrasing.avoid_page_figures else [])
    return specs


def cap(sentence: str) -> str:
    """First letter upper-cased (a no-op on a Chinese character)."""
    return sentence[0].upper() + sentence[1:]


def _fact_sentence(rng: random.Random, lang: Language, spec: DocSpec, attr: Attr, value: Value) -> str:
    """The fact in one of several wordings; every edition words its facts afresh, as rewrites do."""
    p = lang.phrasing
    wordings = [w for w in (attr.sentence, *p.fact_wordings) if "{s}" in w]
    return cap(rng.choice(wordings).format(s=spec.subject, label=attr.label, a_label=p.indefinite(attr.label), v=value.text))


def edition_id(spec: DocSpec, edition: Edition) -> str:
    """An older edition's document id: the current id and the edition's ISO date."""
    return f"{spec.doc_id}-{dt.date.fromordinal(edition.effective).isoformat()}"


def edition_title(lang: Language, edition: Edition) -> str:
    """Old editions live on in an export of the previous site under a generic title, not the page's own."""
    return lang.phrasing.archive_title.format(company=lang.catalog.company, year=dt.date.fromordinal(edition.effective).year)


def render_edition(lang: Language, spec: DocSpec, edition: Edition, rng: random.Random) -> str:
    """Text of an older edition: its changed facts, an unchanged one in the older terse wording, and
    general boilerplate. It names its subject far less often than the current page, so it usually ranks
    below it, while its changed fact is worded as directly as the current one."""
    p = lang.phrasing
    changed = [f for f in spec.facts if f.attr.key in edition.values]
    kept = [f for f in spec.facts if f.attr.key not in edition.values]
    sentences = [_fact_sentence(rng, lang, spec, f.attr, edition.values[f.attr.key]) for f in changed]
    sentences += [cap(f.attr.stale_sentence.format(s=p.pronoun, v=f.value.text)) for f in rng.sample(kept, min(len(kept), 1))]
    rng.shuffle(sentences)
    filler = rng.sample(lang.catalog.filler, EDITION_FILLER)
    cut = len(filler) // 2
    return p.join.join([p.edition.format(date=p.date(edition.effective).text), *filler[:cut], *sentences, *filler[cut:]])


def render(lang: Language, spec: DocSpec, rng: random.Random) -> str:
    """Text of the current document."""
    cat, p = lang.catalog, lang.phrasing
    facts = list(spec.facts)
    head = [rng.choice(cat.intro).format(company=cat.company), p.effective.format(date=p.date(spec.effective).text)]
    sentences = [_fact_sentence(rng, lang, spec, f.attr, f.value) for f in facts]
    target = rng.randint(*p.long_length) if spec.long else rng.randint(*p.short_length)
    templates = cat.subject_filler + cat.guide_filler if spec.long else cat.subject_filler
    pool = [cap(t.format(s=spec.subject, company=cat.company)) for t in templates] + list(cat.filler)
    rng.shuffle(pool)
    body: list[str] = []
    size = sum(p.length(s) for s in head + sentences)
    # Fact sentences are spread evenly through the filler so long documents hold facts deep inside.
    slots = sorted(rng.sample(range(max(len(pool), len(sentences))), len(sentences)))
    fact_iter = iter(sentences)
    sections = iter(cat.sections)
    for position in range(max(len(pool), len(sentences))):
        if spec.long and position % 6 == 0:
            heading = next(sections, None)
            if heading:
                body.append(p.heading.format(heading=heading))
        if position in slots:
            body.append(next(fact_iter))
        elif position < len(pool) and size < target:
            body.append(pool[position])
            size += p.length(pool[position])
    return p.join.join(head + body)
