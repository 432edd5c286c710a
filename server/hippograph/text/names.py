"""Names in free text found by rule: speaker prefixes, capitalised multi-word names, code identifiers.

The statistical recogniser (``store/ner.py``) finds people, places and organisations; these rules
find what it misses or mistypes in a memory's text: the "Caroline:" that opens a chat turn,
"Project Apollo", ``kuzu_session.py`` and ``EntityIndex``. ``merge`` joins both into one list of
``Name`` (first found wins on overlap) and ``TYPES`` says which recogniser label is which
entity type. Pure: no I/O, no model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from hippograph.domain.models import name_key
from hippograph.text.name_cues import HONORIFIC, apposed_type, names_its_kind, title_before
from hippograph.text.query_intent import STOPWORDS, is_stopword

__all__ = [
    "TYPES",
    "UNKNOWN_TYPE",
    "Name",
    "addressed",
    "capitalised_runs",
    "capitalised_words",
    "code_identifiers",
    "keep",
    "merge",
    "opening_word",
    "speaker",
    "without_opening_word",
]

UNKNOWN_TYPE = "concept"
# The entity that facts in the user's own voice, or about "the user", are about (issue 26).
OWNER = "the user"
_FIRST_PERSON = re.compile(r"\bI\b|(?i:\b(?:me|my|mine|myself|the user)\b)")
_OTHER_VOICE = re.compile(r"(?i)^\s*(?:assistant|system|ai|bot|agent|model)\s*:")

# OntoNotes labels (spaCy's English models) -> entity types. Labels left out (DATE, TIME,
# MONEY, PERCENT, QUANTITY, ORDINAL, CARDINAL) are values, not things to remember facts about.
TYPES = {
    "PERSON": "person",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "ORG": "organization",
    "NORP": "group",
    "PRODUCT": "thing",
    "WORK_OF_ART": "work",
    "EVENT": "event",
    "LAW": "concept",
    "LANGUAGE": "language",
}


@dataclass(frozen=True, slots=True)
class Name:
    """A name found in a text: its span as written, its entity type, and how it was found."""

    text: str
    type: str
    how: str  # "speaker", "ner", "capitalised", "code"
    start: int
    end: int


# Labels that open a line like a speaker does but name no one.
_LABELS = frozenset(
    """
    note notes todo update summary warning error re fwd fw q a question answer example decision
    fix bug context status result reason goal idea tip edit ps important info debug step user
    assistant system human ai bot agent source subject title date time location topic tl dr
    """.split()
)
# Words that may come before a name spoken to: "Hey Caroline, ...", "Thanks so much Mel!".
_INTERJECTIONS = frozenset(
    """
    hey hi hello hiya yo dear oh ah wow whoa thanks thank you so much ok okay yes yeah yep no nope
    sorry congrats congratulations great good morning evening afternoon night bye goodbye welcome
    well aw aww haha lol omg awesome cool nice love hugs cheers
    """.split()
)
_WORD = r"[A-Z][\w'’.-]*"
_SPEAKER = re.compile(rf"^\s*({_WORD}(?: {_WORD}){{0,2}}):\s+\S")
_CAPITALISED_RUN = re.compile(rf"\b{_WORD}(?:[ ]+{_WORD})+")
_CAPITALISED_WORD = re.compile(rf"(?<![\w'’.-]){_WORD}(?![\w'’-])")
_SNAKE = r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"
_CAMEL = r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"
_CODE_FILE = r"[\w-]+(?:/[\w.-]+)*\.(?:py|pyi|js|jsx|ts|tsx|go|rs|rb|java|kt|c|h|cc|cpp|hpp|cs|sh|sql|toml|yaml|yml|json|md|cfg|ini)"  # noqa: E501
_CAMEL_ONLY = re.compile(_CAMEL)
_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s")  # "DAGs", "APIs", "PRs": a common noun after a name
# A title ("Uncle", "Dr.") or an acronym's plural is no name on its own.
_TITLE_OR_PLURAL = re.compile(rf"{HONORIFIC.pattern}|{_ACRONYM_PLURAL.pattern}")
_CODE = re.compile(rf"(?<![\w/.-])(?:{_CODE_FILE}|{_SNAKE}|{_CAMEL})(?![\w/-])")


def speaker(text: str) -> Name | None:
    """The speaker of a chat turn that opens with "Name: ...", if its words are a name."""
    match = _SPEAKER.match(text)
    if match is None:
        return None
    words = match.group(1).split()
    if any(w.casefold().strip(".") in _LABELS or w.casefold() in STOPWORDS for w in words):
        return None
    return Name(match.group(1), "person", "speaker", match.start(1), match.end(1))


def capitalised_runs(text: str) -> list[Name]:
    """Runs of two capitalised words or more ("Priya Raman", "Project Apollo"), edge stopwords off,
    cut where a sentence ends ("... in Gdańsk. Mum stayed": two names, not "Gdańsk. Mum")."""
    found: list[Name] = []
    for start, end in _within_sentences(_CAPITALISED_RUN.finditer(text)):
        words = text[start:end].split(" ")
        # A sentence's first word is capitalised whatever it is ("Ask Priya", "Harriet Nkemelu
        # is"): the name typer judges it (``opening_word``), unless a stopword or a title follows
        # ("Ask Mr. Haddad") or the word ends its own sentence ("Thanks. Priya Raman"; not "St.").
        # Edge stopwords ("The", "I") are no part of a name.
        follows = len(words) > 2 and (_is_stopword(words[1]) or HONORIFIC.fullmatch(words[1]))
        ends = words[0].endswith(".") and len(words[0]) > 4 and not HONORIFIC.fullmatch(words[0])
        if _opens_sentence(text, start) and (follows or ends):
            start += len(words.pop(0)) + 1
        while words and (_is_stopword(words[0]) or HONORIFIC.fullmatch(words[0])):
            start += len(words.pop(0)) + 1  # "Mr. Petrov" is Petrov
        while words and (_is_stopword(words[-1]) or _ACRONYM_PLURAL.fullmatch(words[-1])):
            end -= len(words.pop()) + 1  # "Airflow DAGs" is Airflow
        if len(words) >= 2:
            run, end = _unpossessed(text, " ".join(words).rstrip(".'’"), end)
            found.append(Name(run, UNKNOWN_TYPE, "capitalised", start, end))
    return found


def _within_sentences(runs: Iterable[re.Match[str]]) -> Iterator[tuple[int, int]]:
    """The spans of ``runs``, each cut after a word that ends a sentence: a full stop after four
    letters or more, not a title's ("Prof.") nor an abbreviation's ("St.", "Co.", "J.")."""
    for match in runs:
        start = match.start()
        for word in _WORD_IN_RUN.finditer(match.group()):
            last = word.group()
            if last.endswith(".") and len(last.rstrip(".")) > 3 and not HONORIFIC.fullmatch(last):
                yield start, match.start() + word.end()
                start = match.start() + word.end() + 1
        if start < match.end():
            yield start, match.end()


_WORD_IN_RUN = re.compile(r"\S+(?= |$)")


def without_possessive(text: str, name: Name) -> Name:
    """``name`` without the possessive a noun follows ("Pepper's vet": Pepper)."""
    kept, end = _unpossessed(text, name.text, name.end)
    return replace(name, text=kept, end=end) if end != name.end else name


def _unpossessed(text: str, name: str, end: int) -> tuple[str, int]:
    """``name`` and its end without the possessive a noun follows ("Duncan's birthday" is about
    Duncan; "the hospital is St. Mary's." keeps its name)."""
    if name[-2:] in ("'s", "’s") and _NOUN_NEXT.match(text, end):
        return name[:-2], end - 2
    return name, end


_NOUN_NEXT = re.compile(r" +[a-z]")


def capitalised_words(text: str) -> list[Name]:
    """Single capitalised words inside a sentence ("call Tomasz", "moved to Airflow"): names the
    recogniser did not know, untyped (the name typer may type them). Not a sentence's first word,
    not a stopword, not capitals only (`UTC`, `API`: abbreviations name many things)."""
    return [
        Name(word, UNKNOWN_TYPE, "capitalised", start, end)
        for word, start, end, opens in _single(text)
        if not opens
    ]


def opening_words(text: str) -> list[Name]:
    """Single capitalised words that open a sentence ("Rosalind maintains the runners"): a name
    or an ordinary word, which the text cannot tell (``how="opening"``: the name typer judges)."""
    return [
        Name(word, UNKNOWN_TYPE, "opening", start, end)
        for word, start, end, opens in _single(text)
        if opens and not addressed(text, start, end)  # "Maya, I started ...": spoken to, not about
    ]


def _single(text: str) -> Iterator[tuple[str, int, int, bool]]:
    """Each single capitalised word that may be a name (no stopword, not capitals only, three
    letters or more): the word, its span, and whether it opens its sentence."""
    for match in _CAPITALISED_WORD.finditer(text):
        word, _ = _unpossessed(text, match.group(), match.end())
        word = word.rstrip(".'’")
        if not (_is_stopword(word) or word.isupper() or len(word) < 3 or _TITLE_OR_PLURAL.fullmatch(word)):
            yield word, match.start(), match.start() + len(word), _opens_sentence(text, match.start())


def code_identifiers(text: str, *, camel: bool = True) -> list[Name]:
    """``snake_case`` and file names with a source extension; with ``camel``, ``CamelCase`` and
    ``camelCase`` too (which also spell brands: "YouTube", so the recogniser is asked first)."""
    found = [Name(m.group(), "code", "code", m.start(), m.end()) for m in _CODE.finditer(text)]
    return [n for n in found if camel or not _CAMEL_ONLY.fullmatch(n.text)]


def addressed(text: str, start: int, end: int) -> bool:
    """Whether the name at ``text[start:end]`` is spoken to, not about: "Maya, I started ...",
    "Wow Caroline, that's great!", "Thanks, Mel!". A turn addressed to someone is not a fact
    about them."""
    if apposed_type(text[end : end + 60]) is not None:
        return False  # "Marlowe, our CI tool, runs ...": said of it, not to it
    if _RELATIVE_CLAUSE.match(text, end):
        return False  # "two kids: Maja, who is 7, and Olek": said of her
    after = text[end:].lstrip()
    closes = not after or after[0] in ",!?.;:"
    lead_in = text[:start]
    title = title_before(lead_in)
    if title is not None:
        lead_in = lead_in[:title]  # "Our landlord, Mr. Petrov": no sentence ends at "Mr."
    sentence = re.split(r"[.!?;:\n]", lead_in)[-1]
    lead = [w.casefold() for w in re.findall(r"[\w'’]+", sentence)]
    if closes and all(w in _INTERJECTIONS for w in lead):
        return True
    return sentence.rstrip().endswith(",") and (not after or after[0] in "!?.")


_RELATIVE_CLAUSE = re.compile(r",\s*(?:who|whose|whom|which)\b", re.IGNORECASE)


def opening_word(text: str, name: Name) -> str | None:
    """The first word of a name of several words that opens its sentence ("Tell Marco", "Ping
    Sarah Lee", but also "Priya Raman"): a request's verb or a greeting, or the name's own first
    word, which the text cannot tell (the name typer judges); None for any other name, and for
    one that says what it is unless what follows the word does too ("Project Apollo", "Lake
    Tahoe", "Northwind Traders": the word is the name's; "Ask Lakeview Bank": the typer judges)."""
    first, _, rest = name.text.partition(" ")
    says_kind = names_its_kind(name.text) and not names_its_kind(rest)
    opens = rest and _opens_sentence(text, name.start) and not says_kind
    return first if opens else None


def without_opening_word(name: Name) -> Name:
    """``name`` without its first word ("Tell Marco" -> "Marco")."""
    first, _, rest = name.text.partition(" ")
    return replace(name, text=rest, start=name.start + len(first) + 1)


def _opens_sentence(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t\"'“‘(")
    return not before or before[-1] in ".!?:;\n"


def _is_stopword(word: str) -> bool:
    return is_stopword(word.strip(".'’"))


# A quantity and its unit: "840ms", "5GB", "10x", "99.9%" (not "1Password", "3M", "7-Eleven").
_MEASURE = re.compile(
    r"(?i)\d+(?:[.,]\d+)?\s?(?:ms|us|ns|s|sec|secs|min|mins|h|hrs?|d|k|m|b|kb|mb|gb|tb|pb|kib|mib|gib"
    r"|px|pt|em|rem|x|%|rps|qps|fps|hz|khz|mhz|ghz|kg|g|mg|lb|lbs|km|mi|cm|mm|ml|l|kw|kwh|w|v)"
)


def keep(name: str) -> bool:
    """Whether a found span can name an entity: three characters of key or more, not all
    stopwords, digits or days of the week ("I", "it", "2023", "Thursday" name nothing to remember
    facts about), not a quantity ("840ms")."""
    key = name_key(name)
    words = key.split()
    measured = _MEASURE.fullmatch(name.strip()) is not None
    nothing = all(w in STOPWORDS or w.isdigit() or w.rstrip("s") in _WEEKDAYS or w in _MONTHS for w in words)
    return len(key) >= 3 and not measured and not nothing


_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
# Months that are no one's first name too (not April, May, June, August).
_MONTHS = frozenset("january february march july september october november december".split())


def merge(*found: Iterable[Name], blocked: Sequence[tuple[int, int]] = ()) -> list[Name]:
    """One list from several finders, earlier finders first: a name overlapping one already
    taken, or a ``blocked`` span (a date the recogniser found: "Last Friday"), is dropped; the
    same name found twice is kept once, and its words again are no names of their own ("... by
    Lena Sato; ask Ximena when Lena Sato is away" has no "Lena" and "Sato"). "Project X" is a
    project whoever found it."""
    taken: list[Name] = [Name("", "", "blocked", start, end) for start, end in blocked]
    keys: set[str] = set()
    for names in found:
        for name in names:
            key = name_key(name.text)
            if key in keys and keep(name.text):
                taken.append(Name("", "", "blocked", name.start, name.end))
                continue
            if key in keys or not keep(name.text) or _overlaps(name, taken):
                continue
            if key.startswith("project ") and name.type != "project":
                name = replace(name, type="project")
            taken.append(name)
            keys.add(key)
    return [name for name in taken if name.how != "blocked"]


def _overlaps(name: Name, taken: Sequence[Name]) -> bool:
    return any(name.start < other.end and other.start < name.end for other in taken)


def about_owner(text: str) -> bool:
    """Whether ``text`` is about the user: it names "the user", or speaks in the first person
    ("I moved to Lyon", "user: my cat is Miso") and is not another voice's turn ("assistant: I
    will ..."). A named speaker's turn ("Caroline: I ...") is the speaker's: the caller asks."""
    return _FIRST_PERSON.search(text) is not None and _OTHER_VOICE.match(text) is None
