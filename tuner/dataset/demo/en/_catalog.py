"""Demo (dataset → **demo**): the English demo company's products: product lines, firmware releases, support topics and
the facts they state."""

from __future__ import annotations

import datetime as dt

from tuner.dataset.demo._language import Attr, Name, ProductLine, Topic
from tuner.dataset.demo._values import Quantity, error_code, version
from tuner.dataset.demo.en._values import date, decimal, percent, unit, usd

COMPANY = "Lumina Systems"
TODAY = dt.date(2025, 6, 1).toordinal()


def _a(key: str, label: str, quantity: Quantity, sentence: str, stale_sentence: str) -> Attr:
    return Attr(key, label, quantity, sentence, stale_sentence)


DAYS = unit("day", "days")
HOURS = unit("hour", "hours")
MONTHS = unit("month", "months")
MINUTES = unit("minute", "minutes")
SECONDS = unit("second", "seconds")
GB = unit("GB", "GB", "gigabytes")
RECENT = Quantity(date, TODAY - 400, TODAY - 30, 1)

PRODUCT_COMMON = (
    _a("price", "list price", Quantity(usd, 49, 2999, 10), "The list price of {s} is {v}.", "{s} retails for {v}."),
    _a("weight", "weight", Quantity(decimal("kg", "kilograms"), 0.1, 3.5, 0.05), "{s} weighs {v}.", "Its weight is {v}."),
    _a("warranty", "warranty period", Quantity(MONTHS, 12, 48, 6), "{s} is covered by a limited warranty of {v}.", "Warranty coverage lasts {v}."),
    _a("launch", "launch date", RECENT, "{s} became available on {v}.", "Sales started on {v}."),
)

PRODUCT_LINES = tuple(ProductLine(*line) for line in (
    ("Aurora", "laptop", "A", (
        _a("memory", "memory", Quantity(GB, 8, 64, 8), "{s} ships with {v} of memory.", "Memory: {v}."),
        _a("battery", "battery life", Quantity(HOURS, 6, 22, 1), "On a full charge {s} runs for {v}.", "Battery life is rated at {v}."))),
    ("Mercury", "router", "M", (
        _a("coverage", "coverage area", Quantity(unit("square meter", "square meters"), 80, 400, 10), "{s} covers up to {v}.", "Coverage reaches {v}."),
        _a("throughput", "maximum throughput", Quantity(unit("Mbps", "Mbps", "megabits per second"), 600, 9600, 200), "{s} reaches a maximum throughput of {v}.", "Peak speed is {v}."))),
    ("Orion", "monitor", "O", (
        _a("refresh", "refresh rate", Quantity(unit("Hz", "Hz", "hertz"), 60, 360, 12), "{s} refreshes at up to {v}.", "Refresh rate: {v}."),
        _a("brightness", "peak brightness", Quantity(unit("nits", "nits"), 250, 1600, 50), "{s} reaches a peak brightness of {v}.", "Brightness peaks at {v}."))),
    ("Vega", "headphones", "V", (
        _a("battery", "battery life", Quantity(HOURS, 15, 70, 1), "{s} play for {v} per charge.", "Playback time is {v}."),
        _a("charge", "full charge time", Quantity(MINUTES, 45, 180, 5), "A full charge of {s} takes {v}.", "Charging completes in {v}."))),
    ("Nimbus", "tablet", "N", (
        _a("storage", "storage capacity", Quantity(GB, 64, 1024, 64), "{s} offers {v} of storage.", "Storage: {v}."),
        _a("battery", "battery life", Quantity(HOURS, 8, 18, 1), "{s} lasts {v} of video playback.", "Video playback lasts {v}."))),
    ("Helix", "smartwatch", "H", (
        _a("water", "water resistance depth", Quantity(unit("meters", "meters"), 30, 200, 10), "{s} is water resistant to {v}.", "Rated for depths of {v}."),
        _a("battery", "battery life", Quantity(DAYS, 2, 21, 1), "{s} runs for {v} between charges.", "Expect {v} per charge."))),
    ("Atlas", "printer", "P", (
        _a("speed", "print speed", Quantity(unit("pages per minute", "pages per minute", "ppm"), 18, 60, 2), "{s} prints {v}.", "Print speed: {v}."),
        _a("tray", "paper tray capacity", Quantity(unit("sheets", "sheets"), 150, 550, 25), "The paper tray of {s} holds {v}.", "Tray capacity is {v}."))),
    ("Zephyr", "speaker", "Z", (
        _a("output", "output power", Quantity(unit("watts", "watts", "W"), 20, 240, 10), "{s} delivers {v} of output power.", "Output power: {v}."),
        _a("battery", "battery life", Quantity(HOURS, 8, 30, 1), "{s} plays for {v} unplugged.", "Unplugged playback is {v}."))),
    ("Lyra", "camera", "L", (
        _a("sensor", "sensor resolution", Quantity(unit("megapixels", "megapixels", "MP"), 20, 61, 1), "{s} has a {v} sensor.", "Sensor resolution: {v}."),
        _a("shots", "battery rating", Quantity(unit("shots", "shots"), 300, 900, 20), "{s} takes {v} per battery charge.", "Rated at {v} per charge."))),
    ("Quasar", "projector", "Q", (
        _a("lumens", "brightness", Quantity(unit("lumens", "lumens"), 1500, 5000, 100), "{s} projects {v}.", "Brightness: {v}."),
        _a("lamp", "lamp life", Quantity(HOURS, 3000, 20000, 500), "The lamp of {s} lasts {v}.", "Lamp life is {v}."))),
    ("Tundra", "external drive", "T", (
        _a("capacity", "capacity", Quantity(unit("TB", "TB", "terabytes"), 1, 20, 1), "{s} stores {v}.", "Capacity: {v}."),
        _a("read", "read speed", Quantity(unit("MB/s", "MB/s", "megabytes per second"), 400, 2800, 50), "{s} reads at up to {v}.", "Read speed reaches {v}."))),
    ("Pulse", "fitness band", "F", (
        _a("water", "water resistance depth", Quantity(unit("meters", "meters"), 30, 100, 10), "{s} is water resistant to {v}.", "Water resistance: {v}."),
        _a("battery", "battery life", Quantity(DAYS, 5, 25, 1), "{s} runs for {v} on one charge.", "One charge gives {v}."))),
))

RELEASE_ATTRS = (
    _a("version", "version number", Quantity(version, 310, 799, 1), "This release of {s} is version {v}.", "Version {v} of {s} is described here."),
    _a("released", "release date", RECENT, "It was published on {v}.", "Publication date: {v}."),
    _a("fixes", "number of fixed issues", Quantity(unit("issues", "issues"), 6, 60, 1), "The update resolves {v}.", "In total {v} were fixed."),
    _a("size", "download size", Quantity(unit("MB", "MB", "megabytes"), 40, 900, 10), "The download size is {v}.", "The package weighs {v}."),
)

SEASONS = tuple(Name(season, season) for season in ("spring", "summer", "autumn", "winter"))
GUIDES = tuple(Name(guide, guide) for guide in ("user guide", "installation guide", "safety manual"))
SUPPORT_TOPICS = tuple(Topic(Name(topic, topic), attrs) for topic, attrs in (
    ("factory reset", (
        _a("hold", "reset button hold time", Quantity(SECONDS, 5, 30, 1), "To reset {s}, hold the reset button for {v}.", "Keep the reset button pressed for {v}."),
        _a("reboot", "restart time after a reset", Quantity(MINUTES, 2, 15, 1), "After a reset {s} needs about {v} to restart.", "Restart takes about {v}."))),
    ("error codes", (
        _a("code", "error code for an overheating warning", Quantity(error_code, 100, 999, 1), "Overheating on {s} is reported as error {v}.", "Error {v} signals overheating."),
        _a("cooldown", "cooling pause after an overheating warning", Quantity(MINUTES, 5, 45, 5), "Let {s} cool down for {v} before using it again.", "Wait {v} before restarting."))),
    ("battery care", (
        _a("cycles", "rated charge cycles", Quantity(unit("cycles", "cycles"), 300, 1500, 50), "The battery of {s} is rated for {v}.", "Battery endurance: {v}."),
        _a("storage_charge", "recommended storage charge level", Quantity(percent, 30, 80, 5), "Store {s} at about {v} charge.", "Keep the charge near {v} for storage."))),
    ("connectivity", (
        _a("range", "wireless range", Quantity(unit("meters", "meters"), 8, 60, 1), "The wireless range of {s} is {v}.", "Wireless range: {v}."),
        _a("pairing", "pairing window", Quantity(SECONDS, 30, 180, 10), "Pairing mode on {s} stays open for {v}.", "The pairing window closes after {v}."))),
    ("software updates", (
        _a("check", "update check interval", Quantity(HOURS, 6, 72, 6), "{s} checks for updates every {v}.", "Update checks happen every {v}."),
        _a("support_end", "end of software support", Quantity(date, TODAY + 200, TODAY + 1500, 1), "Software updates for {s} are provided until {v}.", "Updates end on {v}."))),
))
