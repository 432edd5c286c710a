"""Reading a query without an LLM: what it asks, which time it means, what it names.

`plan` turns a recall/search query into a `QueryPlan` that retrieval routes on: its intent,
the time range its time phrase names (``time_phrases``), its keywords and capitalised names,
and the text a keyword search should look for (without the words that only say when).
Pure: no I/O, no clock reads (`now` is a parameter).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from hippograph.text.time_phrases import find_range, utc

__all__ = [
    "STOPWORDS",
    "Intent",
    "QueryPlan",
    "content_words",
    "is_stopword",
    "plan",
]


class Intent(StrEnum):
    WHY = "why"
    WHEN = "when"
    WHO = "who"
    WHAT = "what"
    HOW = "how"
    CHANGE = "change"  # "what changed since ...", "what's new": the time is the topic
    GENERAL = "general"


@dataclass(frozen=True)
class QueryPlan:
    intent: Intent
    after: datetime | None  # inclusive, UTC
    before: datetime | None  # exclusive, UTC
    time_phrase: str | None  # the words the range was read from, as written
    grain: timedelta | None  # the length of the period the phrase names (time_phrases.Found)
    complex: bool  # several clauses or entities: expand the graph deeper
    keywords: tuple[str, ...]  # content words, lowercased, without the time phrase
    capitalized: tuple[str, ...]  # proper-noun spans as written: "Caroline", "New York"
    # The query without its time phrase and change cue, for keyword search: "May" in "in May
    # 2023" or "changed" in "what changed since" say when, not what ('' if nothing is left).
    search_text: str = ""


# Query-oriented: besides function words it drops request verbs ("tell", "remind"), so that
# neither keywords nor capitalised spans pick up "Tell me about Jon" -> "Tell".
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each else ever
    few for from further get got had has have having he her here hers herself him himself his how
    i if in into is it its itself just let like me might mine more most much must my myself no nor
    not now of off on once only or other our ours ourselves out over own really same shall she
    should so some still such than that the their theirs them themselves then there these they
    this those through to too under until up upon us very was we were what when where which while
    who whom whose why will with would yet you your yours yourself yourselves may
    tell give describe explain remind remember recall please know
    """.split()
)

_TOKEN = re.compile(r"[^\W_](?:[\w'’-]*[^\W_])?")


def content_words(text: str) -> list[str]:
    """The lowercased words of `text` that carry meaning, in order (possessive 's removed)."""
    words = []
    for match in _TOKEN.finditer(text):
        word = _without_possessive(match.group().lower().replace("’", "'"))
        if len(word) > 1 and not is_stopword(word):
            words.append(word)
    return words


def _without_possessive(word: str) -> str:
    for suffix in ("'s", "’s", "'S", "’S"):
        if word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def is_stopword(word: str) -> bool:
    """Whether ``word`` (any case) is a function word, or a contraction of one ("hadn't", "I'll")."""
    lower = word.lower().replace("’", "'")
    return lower in STOPWORDS or lower.endswith("n't") or lower.split("'")[0] in STOPWORDS


# --- intent ----------------------------------------------------------------------------------


def _cues(*phrases: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(p.replace(" ", r"\s+") for p in phrases) + r")\b")


_WHEN_CUES = _cues(
    "when", "since when", "what time", "what date", "what day", "what month", "what year",
    "which day", "which month", "which year", "how long",
)  # fmt: skip
_INTENT_CUES = (
    (Intent.WHY, _cues("why", "reasons?", "because", "what caused", "what made", "what led to", "how come")),
    (Intent.WHEN, _WHEN_CUES),
    (Intent.WHO, _cues("who", "whom", "whose")),
    (
        Intent.HOW,
        _cues("how do", "how does", "how did", "how to", "how can", "how should", "steps?", "procedure"),
    ),
    # "where" and "how many" ask for an entity's attributes, which the entity lookup answers.
    (Intent.WHAT, _cues("what", "which", "where", "how many", "how much", "tell me about")),
)
# "What changed", "what's new", "anything new", "any updates": a question about what happened
# in a period, not about a topic. ("What new hobby did she start?" asks about a hobby.)
_CHANGE_CUE = re.compile(
    r"\b(?:what(?:'s|’s|\s+has|\s+have|\s+had)?\s+changed|what(?:'s|’s|\s+is)\s+new"
    r"|(?:anything|something)\s+(?:new|changed)|any\s+(?:changes|updates|news)"
    r"|(?:changes|updates|news)(?=\s+since\b))\b",
    re.IGNORECASE,
)
_OPENING_QUESTION_WORD = re.compile(r"^\W*(?:what|which|who|whom|whose|where|how)\b")


def _intent(query: str) -> Intent:
    text = query.lower().replace("’", "'")
    for intent, cues in _INTENT_CUES:
        if intent is Intent.WHEN and _only_subordinate_when(text):
            continue
        if cues.search(text):
            return intent
    return Intent.GENERAL


def _only_subordinate_when(text: str) -> bool:
    # In "What did she do when she got home?" the "when" opens a clause, not the question.
    cues = [m.group() for m in _WHEN_CUES.finditer(text)]
    return bool(cues) and all(c == "when" for c in cues) and bool(_OPENING_QUESTION_WORD.match(text))


_COMPLEX_CUES = _cues("both", "compare", "compared", "comparison", "in common", "differences?", "differ",
                      "versus", "vs", "relationship", "related", "connection", "if")  # fmt: skip
_QUESTION_WORDS = _cues("what", "when", "who", "whom", "whose", "why", "where", "which", "how")


def _is_complex(query: str, capitalized: tuple[str, ...]) -> bool:
    text = query.lower()
    return (
        len(capitalized) >= 2  # two entities: the answer lies on a path between them
        or query.count("?") >= 2
        or len(_QUESTION_WORDS.findall(text)) >= 2  # "what ... when ...": two clauses
        or bool(_COMPLEX_CUES.search(text))  # comparisons and counterfactuals need inference
    )


_ABBREVIATION = re.compile(r"(?=(?:[a-z]*[A-Z]){2})[A-Za-z]{2,5}s?")  # `TL`, `PM`, `IaC`, `SREs`


def abbreviation(span: str) -> bool:
    """Whether a capitalised span is one short word of two capitals or more (`TL`, `CI`, `IaC`):
    what a fact may spell out ("tech lead") as often as a name."""
    return _ABBREVIATION.fullmatch(span) is not None


def _proper_nouns(text: str) -> tuple[str, ...]:
    """Runs of capitalised words separated only by spaces, minus leading/trailing stopwords."""
    runs: list[list[str]] = []
    previous_end = -1
    for match in _TOKEN.finditer(text):
        word = _without_possessive(match.group())
        if not word[0].isupper():
            previous_end = -1
            continue
        if previous_end >= 0 and text[previous_end : match.start()].isspace():
            runs[-1].append(word)
        else:
            runs.append([word])
        # "Caroline's Mom" is two things, so a possessive ends the run.
        previous_end = match.end() if word == match.group() else -1
    spans: list[str] = []
    for run in runs:
        while run and is_stopword(run[0]):  # sentence-initial "What", "Did", and "I"
            run.pop(0)
        while run and is_stopword(run[-1]):
            run.pop()
        if run and " ".join(run) not in spans:
            spans.append(" ".join(run))
    return tuple(spans)


def plan(query: str, now: datetime, *, recent: timedelta | None = None) -> QueryPlan:
    """Read intent, time range, keywords and names from a query. Never raises on text.

    ``recent``: how far back "recently" reaches (None: it names no time).
    """
    now = utc(now)
    found = find_range(query, now, recent=recent)
    # The time phrase is neither a keyword nor a name ("May" in "in May 2023").
    rest = query if found is None else f"{query[: found.start]} , {query[found.end :]}"
    capitalized = _proper_nouns(rest)
    change = _CHANGE_CUE.search(rest)
    topic = rest if change is None else f"{rest[: change.start()]} , {rest[change.end() :]}"
    keywords = tuple(dict.fromkeys(content_words(topic)))
    return QueryPlan(
        intent=Intent.CHANGE if change else _intent(query),
        after=found.after if found else None,
        before=found.before if found else None,
        time_phrase=query[found.start : found.end] if found else None,
        grain=found.grain if found else None,
        complex=_is_complex(query, capitalized),
        keywords=keywords,
        capitalized=capitalized,
        search_text=_search_text(topic) if keywords else "",
    )


def _search_text(text: str) -> str:
    return " ".join(word for word in re.split(r"[\s,]+", text) if word)
