"""The type a sentence gives a name in so many words: "Mr. Petrov", "Bluefin Analytics", "the
University of Toronto", "her startup, Loomcraft", "a band called The Lanterns", "Tariq, our
intern", "Vesta is a small design agency", "the hospital is St. Mary's".

The recogniser and the name typer (``store/name_typing.py``) guess a type from a name's shape and
from what the words around it mean, and guess wrong on names they have not seen ("Loomcraft" a
tool, "Petrov" nothing). These cues state the type instead: a title before a person's name, the
name's own head word ("... Bank", "... Airport", "University of ..."), or a noun for a kind of
thing set beside the name (apposition, "called", a copula). A cue's type stands over any guess.

A bare noun right before a name is no cue ("the app Sarah built", "the city Priya loves"): only
a comma, "called" or "named" between them makes it one. Pure: no I/O, no model.
"""

from __future__ import annotations

import re

__all__ = ["HONORIFIC", "apposed_type", "cued_type", "head_type", "kind_of", "names_its_kind", "title_before"]

# Titles that come before a person's name ("Mr. Petrov", "Aunt Rosa", "Dr Okafor").
HONORIFIC = re.compile(
    r"(?i:mr|mrs|ms|mx|miss|dr|prof|professor|sir|dame|aunt|auntie|uncle|grandma|grandpa|granny|"
    r"cousin|coach|captain|judge|rev|father|sister|brother|officer|detective|nurse)\.?"
)
# Nouns that say what kind of thing a name is, by type (a pet is none of these types).
_KINDS = {
    "person": """colleague coworker co-worker manager boss lead intern friend neighbour neighbor
        landlord landlady roommate flatmate housemate partner wife husband son daughter brother
        sister mother father mom mum dad aunt uncle cousin nephew niece grandmother grandfather
        grandson granddaughter stepson stepdaughter teacher tutor doctor dentist therapist
        physiotherapist mentor mentee teammate classmate girlfriend boyfriend fiancé fiancée
        fiance fiancee nanny babysitter accountant lawyer recruiter contractor plumber
        electrician hairdresser barber trainer director ceo cto cfo founder cofounder co-founder
        engineer developer designer researcher professor student supervisor advisor adviser
        assistant secretary editor author singer artist actor actress player""",
    "place": """city town village country region state province county neighbourhood
        neighborhood district island street road avenue lane square park airport station
        beach lake river mountain valley suburb capital resort venue stadium hotel campus
        borough peninsula coast bay harbour harbor""",
    "organization": """company startup start-up firm agency bank band team club charity
        nonprofit non-profit university college school hospital clinic studio label publisher
        vendor supplier employer lab council ministry department foundation union church
        airline retailer consultancy business corporation enterprise cooperative co-op
        orchestra choir brewery bakery restaurant cafe café""",
    "tool": """tool app application library framework language database editor ide plugin
        extension package browser software laptop phone smartphone tablet console compiler
        runtime linter service platform os bot vacuum router printer camera watch e-reader
        thermostat doorbell headphones earbuds""",
}
_KIND = {noun: kind for kind, nouns in _KINDS.items() for noun in nouns.split()}
# The last word of a name that says its type ("Bluefin Analytics", "Heathrow Airport"), and the
# first words of "University of Toronto", "Bank of Ireland".
_HEADS = {
    "organization": """Inc Ltd LLC GmbH plc Corp Corporation Company Co Group Holdings Labs
        Lab Analytics Technologies Technology Systems Solutions Software Consulting Partners
        Capital Ventures Bank Insurance Airlines Airways Motors Media Studios Studio Agency
        Foundation Trust Institute University College School Academy Hospital Clinic Council
        Ministry Department Association Society Federation Union Club Church Traders Trading
        Industries Logistics Pharmaceuticals Therapeutics Brewery Bakery Records Publishing
        Press Network Networks Collective Cooperative Sons Brothers Dental Plumbing Roofing
        Catering Cleaning Realty Properties Pharmacy Robotics Dynamics Removals Fibre Energy
        Telecom Utilities""",
    "place": """Street St Road Rd Avenue Ave Boulevard Lane Square Park Airport Station
        Bridge Beach Lake River Mountain Mountains Mount Valley Island Islands Bay Harbour Harbor
        Hill Hills Heights Gardens Stadium Arena Plaza Centre Center Mall Market Cathedral Palace
        Castle Tower Falls Canyon Forest Coast Peninsula Desert Sea Ocean Building Hall Lodge
        Campground Campsite""",
}
_HEAD = {word.casefold(): kind for kind, words in _HEADS.items() for word in words.split()}
# The first word of a place's name that says it is one ("Mount Rainier", "Lake Bled", "Fort Worth").
_FIRST_HEADS = "mount mt lake loch fort port cape isle glen calle rue avenida rua piazza plaza"
_FIRST_HEAD = {word: "place" for word in _FIRST_HEADS.split()}
_OF_HEADS = {"university": "organization", "bank": "organization", "college": "organization",
             "institute": "organization", "ministry": "organization", "department": "organization",
             "museum": "place", "isle": "place", "gulf": "place", "lake": "place", "mount": "place",
             "city": "place", "port": "place"}  # fmt: skip

_DETERMINER = r"(?:a|an|the|my|our|his|her|their|your|its|this|that)"
# A noun phrase's words after its determiner: up to four, the last one its head ("a small design
# agency", "our new intern", "the company's accountant").
_PHRASE = rf"{_DETERMINER}\s+(?P<phrase>[\w'’-]+(?:\s+[\w'’-]+){{0,3}}?)"
# "her startup, Loomcraft, ...", "a band called The Lanterns", "our landlord, Mr. Petrov".
_BEFORE = re.compile(
    rf"(?i)\b{_PHRASE}(?P<comma>\s*,|\s*\((?:\s*(?:a|an|the)\s)?|\s+(?:(?:is|was)\s+)?(?:called|named))\s*$"
)
# "Loomcraft, a startup", "Tariq, our new intern", "Vesta is a small design agency".
_PHRASE_END = r"(?=\s*(?:[,.;:!?)]|$|\s(?:in|at|on|for|from|with|of|and|who|that|which)\b))"
_AFTER = re.compile(rf"(?i)^(?:\s*,|\s+(?:is|was)|['’]s)\s+{_PHRASE}{_PHRASE_END}")
# "my neighbour Georgia", "our new intern Tariq": a person's role right before the name, after a
# possessive (a bare noun after "the" is no cue: "the app Sarah built").
_ROLE_BEFORE = re.compile(r"(?i)\b(?:my|our|his|her|their|your)\s+(?:[\w'’-]+\s+)?(?P<noun>[\w'’-]+)\s+$")
# "the hospital is St. Mary's", "my laptop is a ThinkPad".
_COPULA_BEFORE = re.compile(rf"(?i)\b{_PHRASE}\s+(?:is|was)\s+(?:{_DETERMINER}\s+)?$")
_ARTICLE_END = re.compile(r"(?i)(?<![\w'’-])the\s+$")
# After an apposition set off by a comma, the name ends at a mark or the text's end ("her startup,
# Loomcraft, raised"): "at the bank, Sarah called" is two phrases, not one.
_CLOSED = re.compile(r"\s*(?:[,.;:!?)]|$)")


def title_before(before: str) -> int | None:
    """Where the title that ends ``before`` (the text up to a name) starts: "Our landlord, Mr. "
    -> the index of "Mr."; None if its last word is no title."""
    last = re.search(r"(\S+)\s*$", before)
    return last.start() if last and HONORIFIC.fullmatch(last.group(1)) else None


def head_type(name: str) -> str | None:
    """The type a multi-word name's own head word gives it: "Bluefin Analytics" an
    organization, "Heathrow Airport" a place, "University of Toronto" an organization."""
    words = name.replace(".", " ").split()
    if len(words) < 2:
        return None
    if "&" in words:
        return "organization"  # "Dalton & Sons", "Hargrove & Pike": a firm
    if len(words) >= 3 and words[1].casefold() == "of" and words[0].casefold() in _OF_HEADS:
        return _OF_HEADS[words[0].casefold()]
    return _HEAD.get(words[-1].casefold()) or _FIRST_HEAD.get(words[0].casefold())


def names_its_kind(name: str) -> bool:
    """Whether a name of several words says what it is in its first or last word ("Project
    Apollo", "Lake Tahoe", "University of Toronto", "Northwind Traders")."""
    first = name.split(" ", 1)[0].casefold()
    return first in _KIND or first in _OF_HEADS or first == "project" or head_type(name) is not None


def _kind(phrase: str) -> str | None:
    """The type a noun phrase's head (its last word) names, if it names one."""
    return kind_of(phrase.split()[-1])


def kind_of(noun: str) -> str | None:
    """The type a noun for a kind of thing names ("colleague", "accountants", "agency"), if any."""
    key = noun.casefold()
    return _KIND.get(key) or (_KIND.get(key[:-1]) if key.endswith("s") else None)


def cued_type(text: str, start: int, end: int) -> str | None:
    """The type ``text`` states for the name at ``text[start:end]``, or None: a title before
    it, its own head word, or a kind's noun beside it."""
    name = text[start:end]
    before, after = text[max(0, start - 60) : start], text[end : end + 60]
    before = _ARTICLE_END.sub("", before)  # "our band, The Lonely Spoons": the name is "Lonely Spoons"
    if title_before(before) is not None and name[:1].isupper():
        return "person"
    return _stated_beside(name, before, after) or head_type(name)


def _stated_beside(name: str, before: str, after: str) -> str | None:
    """The type the words beside a name state for it: what it is said to be stands over its own
    head word ("our designer is Marcus Hill": a person whose surname is a place's head word)."""
    apposed = _BEFORE.search(before)
    closed = apposed is not None and ("," not in apposed.group("comma") or _CLOSED.match(after))
    if apposed and closed and (kind := _kind(apposed.group("phrase"))) is not None:
        return kind
    if (kind := apposed_type(after)) is not None:
        return kind
    role = _ROLE_BEFORE.search(before)
    if role and kind_of(role.group("noun")) == "person" and name[:1].isupper():
        return "person"
    copula = _COPULA_BEFORE.search(before)
    return _kind(copula.group("phrase")) if copula else None


def apposed_type(after: str) -> str | None:
    """The type a phrase right after a name gives it ("Tolga, our new intern", "Vesta is a small
    design agency"), from the text that follows the name."""
    found = _AFTER.match(after)
    return _kind(found.group("phrase")) if found else None
