"""Demo (dataset → **demo**): policies, regions, partners, stores, service plans, guides and the filler prose of the
English demo company."""

from __future__ import annotations

from tuner.dataset.demo._language import Name, Topic
from tuner.dataset.demo._values import Quantity, version
from tuner.dataset.demo.en._catalog import COMPANY, DAYS, GB, HOURS, MINUTES, RECENT, _a
from tuner.dataset.demo.en._values import decimal, percent, unit, usd


def _names(*texts: str) -> tuple[Name, ...]:
    return tuple(Name(text, text) for text in texts)


REGIONS = _names("United States", "Canada", "United Kingdom", "Germany", "France", "Japan", "Australia", "Brazil")

# A policy's first word is both its id and its looser name ("the return rules in Canada").
POLICIES = tuple(Topic(Name(policy.split()[0], policy), attrs, policy.split()[0]) for policy, attrs in (
    ("return policy", (
        _a("window", "return window", Quantity(DAYS, 14, 90, 1), "Under {s}, customers may return a product within {v} of delivery.", "Returns are accepted for {v} after delivery."),
        _a("restocking", "restocking fee", Quantity(percent, 10, 25, 1), "Opened items carry a restocking fee of {v}.", "A {v} restocking fee applies to opened items."),
        _a("refund", "refund processing time", Quantity(unit("business days", "business days"), 3, 21, 1), "Refunds are issued within {v}.", "Expect the refund after {v}."))),
    ("warranty policy", (
        _a("claim", "claim filing deadline", Quantity(DAYS, 10, 60, 1), "Under {s}, a defect must be reported within {v} of discovery.", "Defects have to be reported within {v}."),
        _a("repair", "repair turnaround", Quantity(unit("business days", "business days"), 4, 30, 1), "Repairs are completed within {v}.", "Repair turnaround is {v}."),
        _a("extension", "extended warranty price", Quantity(usd, 29, 399, 10), "An extended warranty costs {v}.", "Extended coverage is sold for {v}."))),
    ("shipping policy", (
        _a("free", "free shipping threshold", Quantity(usd, 25, 250, 5), "Under {s}, standard shipping is free on orders over {v}.", "Orders above {v} ship free."),
        _a("express", "express shipping fee", Quantity(usd, 12, 79, 1), "Express delivery costs {v}.", "The express fee is {v}."),
        _a("standard", "standard delivery time", Quantity(unit("business days", "business days"), 2, 12, 1), "Standard delivery takes {v}.", "Standard parcels arrive in {v}."))),
    ("security policy", (
        _a("password", "minimum password length", Quantity(unit("characters", "characters"), 10, 24, 1), "Under {s}, passwords must be at least {v} long.", "Minimum password length: {v}."),
        _a("rotation", "password rotation interval", Quantity(DAYS, 30, 365, 15), "Passwords are rotated every {v}.", "Rotation happens every {v}."),
        _a("timeout", "session timeout", Quantity(MINUTES, 5, 120, 5), "Idle sessions expire after {v}.", "The session timeout is {v}."))),
    ("privacy policy", (
        _a("retention", "log retention period", Quantity(DAYS, 30, 720, 10), "Under {s}, access logs are kept for {v}.", "Logs are retained for {v}."),
        _a("request", "data request response time", Quantity(DAYS, 7, 45, 1), "Data access requests are answered within {v}.", "Requests receive an answer within {v}."))),
    ("payment policy", (
        _a("installments", "maximum number of installments", Quantity(unit("installments", "installments"), 3, 36, 3), "Under {s}, purchases can be split into up to {v}.", "Up to {v} are allowed."),
        _a("minimum", "minimum order for installments", Quantity(usd, 100, 1500, 50), "Installments require an order of at least {v}.", "The installment minimum is {v}."))),
    ("trade-in policy", (
        _a("credit", "maximum trade-in credit", Quantity(usd, 50, 900, 10), "Under {s}, a trade-in earns up to {v} of store credit.", "Trade-in credit is capped at {v}."),
        _a("inspection", "trade-in inspection time", Quantity(unit("business days", "business days"), 2, 14, 1), "Inspection of a traded device takes {v}.", "Inspections finish within {v}."))),
))
HANDBOOKS = (Name("it", f"{COMPANY} employee devices"), Name("reseller", f"{COMPANY} reseller demo units"))

# Partners share a name with a product line on purpose: retrieval must not confuse them.
PARTNERS = tuple((Name(name, name), role) for name, role in (
    ("Mercury Logistics", "delivery partner"), ("Aurora Travel", "corporate travel agency"),
    ("Orion Payments", "payment processor"), ("Vega Insurance", "device insurer"),
    ("Nimbus Cloud", "hosting provider"), ("Helix Recycling", "recycling partner"),
    ("Atlas Freight", "freight carrier"), ("Lyra Media", "advertising agency"),
    ("Quasar Capital", "investor"), ("Pulse Health", "wellness program provider"),
    ("Zephyr Couriers", "same-day courier"), ("Tundra Storage", "warehouse operator"),
))
PARTNER_ATTRS = (
    _a("countries", "number of countries served", Quantity(unit("countries", "countries"), 3, 60, 1), "{s} operates in {v}.", "Its network spans {v}."),
    _a("renewal", "contract renewal date", Quantity(RECENT.fmt, RECENT.lo + 500, RECENT.hi + 700, 1), "The agreement with {s} renews on {v}.", "Renewal is due on {v}."),
    _a("sla", "response time commitment", Quantity(HOURS, 2, 72, 2), "{s} commits to respond within {v}.", "The agreed response time is {v}."),
    _a("since", "partnership start", RECENT, "The partnership with {s} began on {v}.", "Cooperation started on {v}."),
)

CITIES = _names("Boston", "Seattle", "Toronto", "Vancouver", "Leeds", "Bristol", "Munich", "Hamburg", "Lyon", "Lille",
                "Osaka", "Sapporo", "Perth", "Adelaide", "Recife", "Curitiba", "Denver", "Austin", "Dublin", "Porto")
STORE_ATTRS = (
    _a("opens", "weekday opening time", Quantity(unit("a.m.", "a.m."), 7, 11, 1), "The {s} opens at {v} on weekdays.", "Weekday opening: {v}."),
    _a("staff", "number of staff", Quantity(unit("employees", "employees"), 8, 140, 1), "The {s} employs {v}.", "It has {v}."),
    _a("area", "floor area", Quantity(unit("square meters", "square meters"), 120, 2400, 20), "The {s} covers {v}.", "Floor space: {v}."),
    _a("opened", "opening date", Quantity(RECENT.fmt, RECENT.lo - 2000, RECENT.lo, 1), "The {s} opened on {v}.", "It first opened its doors on {v}."),
)

PLANS = _names("Care Basic", "Care Plus", "Care Premium", "Cloud Backup", "Cloud Backup Pro", "Family Sharing",
               "Business Fleet", "Device Protect", "Studio Suite", "Print Refill", "Home Network Plus", "Tutor Pass",
               "Creator Pass", "Fitness Coach", "Security Shield", "Travel Connect", "Repair Express", "Office Sync",
               "Kids Safe", "Photo Vault")
PLAN_ATTRS = (
    _a("monthly", "monthly price", Quantity(usd, 12, 59, 1), "The {s} plan costs {v} per month.", "Monthly fee: {v}."),
    _a("annual", "annual price", Quantity(usd, 30, 590, 10), "Paid yearly, {s} costs {v}.", "The yearly price is {v}."),
    _a("devices", "device limit", Quantity(unit("devices", "devices"), 2, 25, 1), "{s} covers up to {v}.", "Up to {v} may be enrolled."),
    _a("trial", "free trial length", Quantity(DAYS, 7, 60, 1), "New subscribers to {s} get a free trial of {v}.", "The trial lasts {v}."),
)

GUIDE_ATTRS = (
    _a("temp_max", "maximum operating temperature", Quantity(unit("°C", "°C", "degrees Celsius"), 30, 55, 1), "Operate {s} at no more than {v}.", "The upper operating limit is {v}."),
    _a("temp_min", "minimum storage temperature", Quantity(unit("°C below zero", "°C below zero"), 5, 30, 1), "Never store the device colder than {v}.", "Storage is rated down to {v}."),
    _a("adapter", "power adapter rating", Quantity(unit("W", "W", "watts"), 18, 240, 6), "The supplied power adapter is rated at {v}.", "Adapter rating: {v}."),
    _a("cable", "cable length", Quantity(decimal("m", "meters"), 0.5, 3, 0.1), "The supplied cable is {v} long.", "Cable length: {v}."),
    _a("setup", "typical setup time", Quantity(MINUTES, 5, 60, 5), "Initial setup usually takes {v}.", "Allow {v} for setup."),
    _a("hotline", "support hotline hours", Quantity(unit("hours a day", "hours a day"), 8, 20, 1), "The support hotline is staffed {v}.", "Hotline staffing: {v}."),
    _a("loaner", "loaner device fee", Quantity(usd, 15, 120, 5), "A loaner device during repairs costs {v}.", "Loaners are rented for {v}."),
    _a("cache", "local cache size", Quantity(GB, 2, 48, 2), "The local cache may use up to {v}.", "Cache size is capped at {v}."),
    _a("certified", "certification date", RECENT, "Safety certification was granted on {v}.", "Certified on {v}."),
    _a("fall", "drop test height", Quantity(decimal("m", "meters"), 0.6, 2, 0.1), "The device survived drop tests from {v}.", "Drop tested from {v}."),
    _a("firmware_min", "minimum supported firmware", Quantity(version, 200, 299, 1), "Features in this guide need at least firmware {v}.", "Minimum firmware: {v}."),
    _a("noise", "noise level", Quantity(unit("dB", "dB", "decibels"), 18, 48, 1), "Under load the noise level stays below {v}.", "Noise stays under {v}."),
)

INTRO = (
    "This page is maintained by the {company} documentation team.",
    "{company} publishes this page for customers and partners.",
    "The following information applies to all sales channels of {company}.",
    "Please read this page carefully before contacting support.",
)
FILLER = (
    "Customers can reach the support team through the online help center or by phone.",
    "The information on this page supersedes earlier announcements and printed leaflets.",
    "Regional retailers may run their own promotions that are not reflected here.",
    "Accessories sold separately are covered by their own documentation.",
    "Feedback about this page can be sent through the help center form.",
    "Specifications are measured under laboratory conditions and may vary in daily use.",
    "Business customers should contact their account manager for volume agreements.",
    "Screenshots and illustrations are provided for guidance only.",
    "Some features depend on the installed software and the local network.",
    "Our engineers review this material whenever a major change ships.",
    "Terms not defined here follow the general terms of sale.",
    "Translations of this page are provided for convenience; the English version prevails.",
    "Customers who bought through a reseller should keep the reseller invoice.",
    "Environmental information and recycling instructions are available on request.",
    "The help center also lists answers to frequently asked questions.",
    "Product names mentioned on this page are trademarks of their respective owners.",
    "Always install the latest software before reporting a problem.",
    "Keep the original packaging until the return window has passed.",
    "Instructions assume that the device has been registered to a customer account.",
    "Store managers can confirm local availability before a visit.",
    "Misuse, unauthorized modification and liquid damage are handled separately.",
    "Where local law grants stronger rights, those rights apply.",
    "The support team may ask for the serial number and proof of purchase.",
    "Safety notices printed on the device take precedence over this page.",
)
SECTIONS = ("Overview", "Getting started", "Everyday use", "Maintenance", "Troubleshooting", "Safety", "Service", "Appendix")
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
