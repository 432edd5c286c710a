"""Is a new statement one memory already holds, one that disputes it, or just a neighbour? Pure rules.

``remember`` finds the active facts nearest to a new statement by meaning (cosine similarity of
their embeddings) and asks ``judge`` about each. Similarity alone cannot tell a restatement
from a change: "Rosa's favourite food is sushi" / "... is pizza" and "The user likes concise
answers" / "The user prefers concise answers" are equally close. So a pair is the same
statement only when it is close (``SAME_MIN_SIMILARITY``, measured by ``python -m
bench.duplicates``) *and* the words that carry its values agree (``compare``): the same
content words (modulo inflection, British/American spelling and a closed list of
function and liking words), the same numbers, the same negation, names in the same order.
The guard has no tuned constant: a restatement may reword, never replace a value.

A close pair about the same subject that fails the guard is a likely conflict: the caller is
shown it. Only an exact denial (the same words, one side negated) is sure enough for a
CONTRADICTS edge. Everything here is a function of texts and values: no I/O, no model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from hippograph.domain.models import Fact, FactKind, name_key

# The least cosine similarity (stored vectors, see bench/duplicates.py) for two statements to be
# one: chosen by 5-fold cross-validation on bench/data/duplicate_pairs.jsonl, where it is also
# scored on the folds it was not chosen on (bench/results/duplicates.md).
SAME_MIN_SIMILARITY = 0.80
# Facts at least this close are shown to the caller (and may be flagged as conflicts).
SIMILAR_MIN_SIMILARITY = SAME_MIN_SIMILARITY


class Verdict(StrEnum):
    SAME = "same"  # a restatement: corroborate the stored fact instead of storing a copy
    CONTRADICTS = "contradicts"  # an exact denial of the stored fact: both kept, linked
    CONFLICT = "conflict"  # likely says something else about the same thing: shown, not linked
    SIMILAR = "similar"  # close, but neither: shown
    UNRELATED = "unrelated"  # not close enough to show


class Difference(StrEnum):
    """Why two close statements are not one: the first that applies."""

    NEGATION = "negation"  # one denies what the other asserts
    NUMBER = "number"  # their numbers differ
    NAME = "name"  # a name differs, or names swap places
    VALUE = "value"  # a content word differs
    ORDER = "order"  # the same words compared the other way round ("tea over coffee")
    STRUCTURE = "structure"  # their subject/predicate/object values differ
    TIME = "time"  # they happened at different times
    EVENT = "event"  # conversation turns are events: never merged


# Differences in what a statement says (a conflict if the subject is shared), as opposed to
# differences in when or how it was said.
_CONTENT_DIFFERENCES = frozenset(
    {
        Difference.NEGATION,
        Difference.NUMBER,
        Difference.NAME,
        Difference.VALUE,
        Difference.ORDER,
        Difference.STRUCTURE,
    }
)


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    difference: Difference | None = None


# ---------------------------------------------------------------- the lexicon (closed classes only)

# Function words (NLTK's English list without its negations, which are counted, not dropped).
_FUNCTION = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could d did do does doing down during each every few for from
    further had has have having he her here hers herself him himself his how i if in into is it its
    itself just ll m ma me more most my myself now o of off on once only or other our ours ourselves
    out over own re s same she should so some such t than that the their theirs them themselves then
    there these they this those through to too under until up ve very was we were what when where
    which while who whom why will with would y you your yours yourself yourselves also""".split()
)
# Words that state the holder's liking without changing what is liked: restatements swap them.
_LIKING = frozenset("like likes love loves prefer prefers enjoy enjoys".split())
# Intensifiers and hedges that do not change a statement's value.
_HEDGES = frozenset("really quite actually definitely strongly generally".split())
_NEGATIONS = frozenset(
    "not no never none nobody nothing nowhere neither nor without cannot".split()
)
# Words that make a statement compare two things in order: "tea over coffee" is not "coffee over tea".
_COMPARATIVES = frozenset("than over instead rather versus vs".split())
_CLITICS = frozenset("m re ve ll d s".split())
_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000", "once": "1x"}
_NUMBER_WORDS |= {"twice": "2x", "million": "1000000", "dozen": "12", "half": "0.5"}

_TOKEN = re.compile(r"[^\W_]+(?:['’.:,/-][^\W_]+)*", re.UNICODE)
_PARTS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)


@dataclass(frozen=True)
class _Words:
    """What ``compare`` reads from one text."""

    content: tuple[str, ...]  # normalised content words, in order
    names: frozenset[str]  # those written with a capital letter
    numbers: tuple[str, ...]  # sorted
    negations: int
    comparative: bool


def _normal(word: str) -> str:
    """One spelling per word: lowercase, no possessive, singular, -ing dropped, American spelling."""
    w = word.casefold().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.replace("'", "")
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("sses", "xes", "ches", "shes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "ls":
            w = w[:-1]  # running -> run
    if len(w) >= 6:
        w = re.sub(r"(?<=[^aeiou])our(?=$|ite|ed|s$)", "or", w)  # colour, favourite, flavoured
        w = re.sub(r"is(?=e$|ed$|es$|ation)", "iz", w)  # organise, realised, organisation
    return w


def _read(text: str) -> _Words:
    content: list[str] = []
    names: set[str] = set()
    numbers: list[str] = []
    negations = 0
    comparative = False
    for token in _TOKEN.finditer(text):
        if any(ch.isdigit() for ch in token.group()):
            numbers.append(token.group().casefold().replace(",", ""))
            continue
        for part in _PARTS.finditer(token.group()):
            raw = part.group()
            lower = raw.casefold().replace("’", "'")
            if lower.endswith("n't") or lower in _NEGATIONS:
                negations += 1
                continue
            head, _, clitic = lower.partition("'")
            if clitic in _CLITICS and head in _FUNCTION:
                continue  # I'm, it's, we've, they'll, you'd
            if lower in _NUMBER_WORDS:
                numbers.append(_NUMBER_WORDS[lower])
                continue
            comparative |= lower in _COMPARATIVES
            word = _normal(raw)
            if not word or {word, lower} & (_FUNCTION | _LIKING | _HEDGES):
                continue
            content.append(word)
            if any(ch.isupper() for ch in raw):
                names.add(word)
    return _Words(tuple(content), frozenset(names), tuple(sorted(numbers)), negations, comparative)


def compare(a: str, b: str) -> Difference | None:
    """The first difference in what two texts say, or None when they say it in other words.

    In order: negation (how many negating words each has), numbers (as a multiset, number
    words read as digits), names and other content words (as sets: a word of one that the
    other lacks), then order (names, and every shared word when either compares two things).
    """
    x, y = _read(a), _read(b)
    if x.negations != y.negations:
        return Difference.NEGATION
    if x.numbers != y.numbers:
        return Difference.NUMBER
    only = set(x.content) ^ set(y.content)
    if only:
        return Difference.NAME if only & (x.names | y.names) else Difference.VALUE
    names = x.names | y.names
    if _order(x.content, names) != _order(y.content, names):
        return Difference.NAME
    if (x.comparative or y.comparative) and _order(x.content) != _order(y.content):
        return Difference.ORDER
    return None


def _order(words: tuple[str, ...], among: frozenset[str] | None = None) -> tuple[str, ...]:
    """Each word's first place, of those ``among`` (all if None)."""
    return tuple(dict.fromkeys(w for w in words if among is None or w in among))


def same_subject(a: str, b: str) -> bool:
    """Whether two texts are about the same someone or something: a name they share, or the same
    first content word ("The user ..." / "User ...", "The standup ..." / "The standup ...")."""
    x, y = _read(a), _read(b)
    if x.names & y.names:
        return True
    return bool(x.content and y.content and x.content[0] == y.content[0])


# ---------------------------------------------------------------- facts


def _value_key(value: str | None) -> str:
    return " ".join((value or "").casefold().split())


def _structural(new: Fact, old: Fact) -> Difference | None:
    """Differences the facts' fields show, whatever their texts say."""
    if FactKind.EPISODE in (new.kind, old.kind):
        return Difference.EVENT
    if (new.kind is FactKind.NEGATIVE) != (old.kind is FactKind.NEGATIVE):
        return Difference.NEGATION
    if new.event_time and old.event_time and not _same_day(new.event_time, old.event_time):
        return Difference.TIME
    if new.subject and new.predicate and old.subject and old.predicate:
        if (name_key(new.subject), name_key(new.predicate)) != (name_key(old.subject), name_key(old.predicate)):
            return Difference.STRUCTURE
        if _value_key(new.object) != _value_key(old.object):
            return Difference.STRUCTURE
    elif new.predicate and not old.predicate:
        # The new one states a subject-predicate-object claim the stored one lacks: keep it, so
        # the conflict rule can use it. (The old one, with no claim, takes no structure away.)
        return Difference.STRUCTURE
    return None


def _same_day(a: datetime, b: datetime) -> bool:
    return a.date() == b.date()


def judge(new: Fact, old: Fact, similarity: float) -> Judgement:
    """What ``new`` is to the stored active ``old`` of the same scope, ``similarity`` apart.

    SAME: close enough, nothing differs (``compare``), and the fields agree (kinds, event
    day, subject/predicate/object). CONTRADICTS: the same words, one negated (or one a
    negative fact), about the same subject. CONFLICT: close, about the same subject, and a
    value, number, name or negation differs. Otherwise SIMILAR if close, else UNRELATED.
    """
    if similarity < SIMILAR_MIN_SIMILARITY:
        return Judgement(Verdict.UNRELATED)
    structural = _structural(new, old)
    worded = compare(new.content, old.content)
    difference = structural or worded
    if difference is None:
        return Judgement(Verdict.SAME if similarity >= SAME_MIN_SIMILARITY else Verdict.SIMILAR)
    if difference not in _CONTENT_DIFFERENCES or not _about_the_same(new, old):
        return Judgement(Verdict.SIMILAR, difference)
    if difference is Difference.NEGATION and compare(_affirmed(new), _affirmed(old)) is None:
        return Judgement(Verdict.CONTRADICTS, difference)
    return Judgement(Verdict.CONFLICT, difference)


def _about_the_same(new: Fact, old: Fact) -> bool:
    if new.subject and old.subject:
        return name_key(new.subject) == name_key(old.subject)
    return same_subject(new.content, old.content)


def _affirmed(fact: Fact) -> str:
    """The fact's words without its negations (a negative fact's content usually is one)."""
    return " ".join(
        word
        for word in fact.content.split()
        if word.casefold().strip(".,;:!?") not in _NEGATIONS and not word.casefold().endswith("n't")
    )
