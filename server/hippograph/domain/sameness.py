"""Is a new statement one memory already holds, one that disputes it, or just a neighbour? Pure rules.

``remember`` finds the active facts nearest a new statement by meaning (cosine similarity of
their embeddings) and asks ``judge`` about each. Similarity alone cannot tell a restatement
from a change: "The user is left-handed" / "... right-handed" score 0.98, as close as most
rewordings. So a pair is the same statement only when it is close (``MIN_SIMILARITY``) *and*
the words that carry its values agree (``compare``): the same content words (modulo
inflection, British/American spelling and closed lists of function and liking words), the
same numbers, the same negation, names in the same order. The guard has no tuned constant: a
restatement may reword, never replace a value; one in other words (synonyms) is not merged
(bench/results/duplicates.md measures both sides).

A close pair about the same subject that fails the guard is a likely conflict: the caller is
shown it. Only an exact denial (the same words, one side negated) is sure enough for a
CONTRADICTS edge. Everything here is a function of texts and values: no I/O, no model.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from hippograph.domain.conflicts import value_key
from hippograph.domain.models import Fact, FactKind, name_key

# How close (cosine similarity of the stored vectors) a stored fact must be to a new statement to
# be weighed at all: to be shown to the caller, flagged as a conflict, or found to be the same.
# Chosen by 5-fold cross-validation on bench/data/duplicate_pairs.jsonl and scored on the folds
# it was not chosen on, and on a test set it never saw (``python -m bench.duplicates``). Whether a
# close pair is the same statement is the guard's call (``compare``), not this number's.
MIN_SIMILARITY = 0.76
# How close a stored fact about the same subject must be to be shown at all, though never merged:
# a changed value often moves a statement further than a rewording does ("Ana's flat is in Porto"
# / "... in Lisbon"). The 5th percentile of the similarities of the same-subject pairs of
# bench/data/duplicate_pairs.jsonl that restate or change one another (0.62), rounded down.
LIST_SIMILARITY = 0.6


class Verdict(StrEnum):
    SAME = "same"  # a restatement: corroborate the stored fact instead of storing a copy
    CONTRADICTS = "contradicts"  # an exact denial of the stored fact: both kept, linked
    CONFLICT = "conflict"  # a value, number, name or negation differs about the same thing: shown
    UNSURE = "unsure"  # about the same thing, other words: reworded or changed, the caller judges
    SIMILAR = "similar"  # close, but neither: shown
    # The new statement reports a change and this is the stored fact nearest it (``says_changed``):
    # shown however far apart, the caller judges whether it is what changed.
    CHANGE_REPORTED = "change reported"
    # The same words dated another day: kept as an event of its own (two runs are two facts),
    # shown so that the caller can say it restates the stored one instead.
    REPEATED = "repeated"
    # Dated another day, a number, name or negation differs about the same thing: a value that
    # changed since ("rent is £48", then "£62 from January"), or another event (a 5k run, then a
    # 10k one): shown with a note, the caller judges.
    DATED_CHANGE = "dated change"
    UNRELATED = "unrelated"  # not close enough to show


class Difference(StrEnum):
    """Why two close statements are not one: the first that applies."""

    NEGATION = "negation"  # one denies what the other asserts
    NUMBER = "number"  # their numbers differ
    NAME = "name"  # a name differs, or names swap places
    DATE = "date"  # a day of the week or a month differs ("on Tuesdays" / "on Wednesdays")
    VALUE = "value"  # a content word differs
    ORDER = "order"  # the same words compared the other way round ("tea over coffee")
    STRUCTURE = "structure"  # their subject/predicate/object values differ
    CLAIM = "claim"  # only the new one states a subject/predicate/object claim: kept as its own fact
    TIME = "time"  # they happened at different times
    EVENT = "event"  # conversation turns are events: never merged


# Differences in what a statement says, as opposed to differences in when or how it was said.
_CONTENT_DIFFERENCES = frozenset(
    {
        Difference.NEGATION,
        Difference.NUMBER,
        Difference.NAME,
        Difference.DATE,
        Difference.VALUE,
        Difference.ORDER,
        Difference.STRUCTURE,
    }
)
# ... and those that are evidence of a changed value: a conflict if the subject is shared. A
# content word that differs (VALUE) may be a synonym ("works at" / "is employed by") as often as
# a new value ("sushi" / "ramen"): the words cannot tell, so the caller is asked (UNSURE).
_CHANGED_VALUE = _CONTENT_DIFFERENCES - {Difference.VALUE}


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
_NEGATIONS = frozenset("not no never none nobody nothing nowhere neither nor without cannot".split())
# Words that make a statement compare two things in order: "tea over coffee" is not "coffee over tea".
_COMPARATIVES = frozenset("than over instead rather versus vs".split())
_CLITICS = frozenset("m re ve ll d s".split())
# Words with which a statement reports that something changed: "I moved to Berlin", "we switched
# to Vite", "standup is now at 10:15", "I no longer drink coffee". Such a statement is worded from
# the new value; what it replaces may share few of its words ("I live in Paris": similarity 0.40).
_CHANGE_WORDS = re.compile(
    r"\b(?:mov(?:ed|es|ing)|switch(?:ed|es|ing)?|chang(?:ed|es|ing)|now|nowadays|these days|no longer"
    r"|any ?more|stopp(?:ed|ing)|quit|instead|replac(?:ed|es|ing)|relocat(?:ed|es|ing)|migrat(?:ed|es|ing)"
    r"|upgrad(?:ed|es|ing)|downgrad(?:ed|es|ing)|t(?:ook|aken|akes|aking) over|dropp(?:ed|ing)"
    r"|reschedul(?:ed|es|ing)|renam(?:ed|es|ing)|correction|actually|turn(?:ed|s) \d+"
    r"|(?:go(?:es|ne)?|went|going) (?:up|down)|(?:rais|increas|decreas)(?:ed|es|ing))\b"
    # "... again", but not "never ... again": a warning, no change.
    r"|^(?!.*\b(?:never|not|no)\b|.*n't\b).*\bagain\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = {
    word: str(value)
    for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80"}
_NUMBER_WORDS |= {"ninety": "90", "hundred": "100", "thousand": "1000", "once": "1x"}
_NUMBER_WORDS |= {"twice": "2x", "million": "1000000", "dozen": "12", "half": "0.5"}

_TOKEN = re.compile(r"[^\W_]+(?:['’.:,/-][^\W_]+)*", re.UNICODE)
_PARTS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?;:]")
_COORDINATORS = frozenset({"and", "or", "&"})
# Days and months say when, not who: they may move about a sentence ("Every Monday, send ...").
_TIME_NAMES = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june "
    "july august september october november december".split()
)


@dataclass(frozen=True)
class _Words:
    """What ``compare`` reads from one text."""

    content: tuple[str, ...]  # normalised content words, in order
    # Content words in order, words joined by "and", "or" or a comma sharing one slot.
    slots: tuple[frozenset[str], ...]
    capitalised: frozenset[str]  # written with a capital anywhere
    inner_capitalised: frozenset[str]  # ... and not as a sentence's first word
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


@functools.lru_cache(maxsize=1024)  # judging one statement reads each text several times
def _read(text: str) -> _Words:
    content: list[str] = []
    slots: list[set[str]] = []
    capitalised: set[str] = set()
    inner: set[str] = set()
    numbers: list[str] = []
    negations = 0
    comparative = False
    joined = False  # the last word was a content word, then only a coordinator or a comma
    last_end = 0
    for token in _TOKEN.finditer(text):
        gap = text[last_end : token.start()]
        initial = last_end == 0 or bool(_SENTENCE_END.search(gap))
        joined = joined and gap.strip() in ("", ",")
        last_end = token.end()
        if any(ch.isdigit() for ch in token.group()):
            numbers.append(token.group().casefold().replace(",", ""))
            joined = False
            continue
        for part in _PARTS.finditer(token.group()):
            raw = part.group()
            lower = raw.casefold().replace("’", "'")
            word = _normal(raw)
            head, _, clitic = lower.partition("'")
            comparative |= lower in _COMPARATIVES
            if lower.endswith("n't") or lower in _NEGATIONS:
                negations += 1
            elif clitic in _CLITICS and head in _FUNCTION:
                pass  # I'm, it's, we've, they'll, you'd
            elif lower in _NUMBER_WORDS:
                numbers.append(_NUMBER_WORDS[lower])
            elif word and not {word, lower} & (_FUNCTION | _LIKING | _HEDGES):
                content.append(word)
                if joined and slots:
                    slots[-1].add(word)
                else:
                    slots.append({word})
                if any(ch.isupper() for ch in raw):
                    capitalised.add(word)
                    if not initial:
                        inner.add(word)
                joined = True
                initial = False
                continue
            joined = joined and lower in _COORDINATORS
            initial = False
    return _Words(
        tuple(content),
        tuple(frozenset(slot) for slot in slots),
        frozenset(capitalised),
        frozenset(inner),
        tuple(sorted(numbers)),
        negations,
        comparative,
    )


def _names(x: _Words, y: _Words) -> frozenset[str]:
    """The words either text writes as a name: capitalised inside a sentence, or in both texts
    (a capital on a sentence's first word alone says nothing)."""
    return x.inner_capitalised | y.inner_capitalised | (x.capitalised & y.capitalised)


def compare(a: str, b: str) -> Difference | None:
    """The first difference in what two texts say (``_compare``), or None when they say it in
    other words. A "..., not X" that sets a number or a name right ("13 March, not the 3rd",
    "Olek is 5, not 4") is read without the X it rules out: the number or name differs, no
    denial; "We use Postgres, not MySQL" restates "We use Postgres" ("vegetarian, not vegan"
    still denies "vegan")."""
    worded = _compare(a, b)
    if worded is Difference.NEGATION and (_CONTRAST.search(a) or _CONTRAST.search(b)):
        righted = _compare(_CONTRAST.sub("", a), _CONTRAST.sub("", b))
        if righted in (None, Difference.NUMBER, Difference.NAME, Difference.DATE):
            return righted
    return worded


# ", not the 3rd", ", not 4 -", ", not MySQL.": a short clause naming what a statement is not.
_CONTRAST = re.compile(
    r",\s*not\s+(?:the\s+|an?\s+)?[^\s,.;:!?]+(?:\s+[^\s,.;:!?]+)?(?=\s*(?:[,.;:!?]|\s[-–—]\s|$))"
)


def _compare(a: str, b: str) -> Difference | None:
    """The first difference in what two texts say, or None when they say it in other words.

    In order: negation (how many negating words each has), numbers (as multisets, number
    words read as digits: each holds one the other lacks), names and other content words (as
    sets: a word of one that the other lacks), then order (names, and every shared word when
    either compares two things). A number one states and the other leaves out changes no value
    ("climbs 5.11c with me" / "is who I climb with"): it differs as a content word does.
    """
    x, y = _read(a), _read(b)
    if x.negations != y.negations:
        return Difference.NEGATION
    ours, theirs = Counter(x.numbers), Counter(y.numbers)
    if ours - theirs and theirs - ours:
        return Difference.NUMBER
    mine, yours = set(x.content) - set(y.content), set(y.content) - set(x.content)
    names = _names(x, y)
    if mine or yours:
        # A name one text adds ("Rashida" / "Rashida Okonkwo") replaces none, as with numbers
        # (``judge``: unless the text that adds it says something changed).
        # A day or a month changes for a day or a month, a name for a name ("Thursday" in one
        # text and "Raman" in the other is no changed name).
        days, named = names & _TIME_NAMES, names - _TIME_NAMES
        if mine & named and yours & named:
            return Difference.NAME
        return Difference.DATE if mine & days and yours & days else Difference.VALUE
    if ours != theirs:
        return Difference.VALUE
    # Who does what to whom: the names (not days or months) in the same order, but a list of
    # names ("Japanese and English") in any order.
    people = names - _TIME_NAMES
    if _order(x.slots, people) != _order(y.slots, people):
        return Difference.NAME
    if (x.comparative or y.comparative) and _order(x.slots) != _order(y.slots):
        return Difference.ORDER
    return None


def _order(slots: tuple[frozenset[str], ...], among: frozenset[str] | None = None) -> list[frozenset[str]]:
    """The slots' words (those ``among``, if given) in order, each word at its first place."""
    seen: set[str] = set()
    order = []
    for slot in slots:
        words = frozenset(w for w in slot if (among is None or w in among) and w not in seen)
        seen |= words
        if words:
            order.append(words)
    return order


def _adds_name(a: str, b: str) -> bool:
    """Whether ``a`` writes a name ``b`` lacks."""
    x, y = _read(a), _read(b)
    return bool((set(x.content) - set(y.content)) & _names(x, y))


def same_subject(a: str, b: str) -> bool:
    """Whether two texts are about the same someone or something: a name they share, or the same
    first content word ("The user ..." / "User ...", "The standup ..." / "The standup ...")."""
    x, y = _read(a), _read(b)
    if _names(x, y) & set(x.content) & set(y.content):
        return True
    return bool(x.content and y.content and x.content[0] == y.content[0])


def another_holder(a: str, b: str) -> bool:
    """Whether two texts are one sentence whose differing slot opens it, only function words before
    it: the same claim of another holder ("Ken lives in Osaka" / "Yuki lives in Osaka", "The
    backend is written in Rust" / "The frontend ..."), whatever names they share after it."""
    slot = _slot(a, b)
    return slot is not None and all(w in _FUNCTION for w in words(a)[: slot[0]])


def says_changed(text: str) -> bool:
    """Whether ``text`` reports that something changed (``_CHANGE_WORDS``)."""
    return _CHANGE_WORDS.search(text) is not None


def answers(query: str, text: str) -> bool:
    """Whether ``text`` holds every content word and number of ``query`` (which has some): how
    ``correct(query=...)`` knows which fact a caller means, or that it cannot tell."""
    q, t = _read(query), _read(text)
    if not q.content and not q.numbers:
        return False
    return set(q.content) <= set(t.content) and not Counter(q.numbers) - Counter(t.numbers)


# ---------------------------------------------------------------- facts


def _structural(new: Fact, old: Fact) -> Difference | None:
    """Differences the facts' fields show, whatever their texts say."""
    if FactKind.EPISODE in (new.kind, old.kind):
        return Difference.EVENT
    if (new.kind is FactKind.NEGATIVE) != (old.kind is FactKind.NEGATIVE):
        return Difference.NEGATION
    if new.event_time and old.event_time and not _same_day(new.event_time, old.event_time):
        return Difference.TIME
    if new.subject and new.predicate and old.subject and old.predicate:
        if (name_key(new.subject), name_key(new.predicate)) != (
            name_key(old.subject),
            name_key(old.predicate),
        ):
            return Difference.STRUCTURE
        if value_key(new.object) != value_key(old.object):
            return Difference.STRUCTURE
    elif new.predicate and not old.predicate:
        # The new one states a claim the stored one lacks: kept, so the conflict rule can use it.
        return Difference.CLAIM
    return None


def _same_day(a: datetime, b: datetime) -> bool:
    return a.date() == b.date()


def judge(new: Fact, old: Fact, similarity: float, *, min_similarity: float = MIN_SIMILARITY) -> Judgement:
    """What ``new`` is to the stored active ``old`` of the same scope, ``similarity`` apart.

    From ``min_similarity``: SAME when nothing differs (``compare``, and the fields: kinds, event
    day, subject/predicate/object). About the same subject: CONTRADICTS when the words are the
    same but one is negated (or a negative fact); CONFLICT when a number, name, negation, order or
    claim value differs (evidence of a changed value); UNSURE when only content words differ
    (reworded or changed: the words cannot tell). Else SIMILAR. From ``LIST_SIMILARITY`` up to
    ``min_similarity``, a fact about the same subject is judged the same way but never SAME (too
    far to merge): CONFLICT, CONTRADICTS or UNSURE. Anything further is UNRELATED.
    """
    near = similarity >= min_similarity
    if not near and (similarity < min(LIST_SIMILARITY, min_similarity) or not _about_the_same(new, old)):
        if not one_slot_apart(new.content, old.content):
            return Judgement(Verdict.UNRELATED)
        if not _about_the_same(new, old):
            # One sentence with another holder ("Carmen is on call" / "Dmitri is on call"):
            # shown, but a slot may hold several (both may like tea): the caller judges.
            return Judgement(Verdict.UNSURE, compare(new.content, old.content) or Difference.VALUE)
    structural = _structural(new, old)
    worded = compare(new.content, old.content)
    if worded is Difference.VALUE and says_changed(new.content) and _adds_name(new.content, old.content):
        worded = Difference.NAME  # "... is led by Marco instead of Priya": a new holder
    if structural is None and worded is Difference.VALUE and _same_claim(new, old):
        worded = None  # one claim in other words: "Ken lives in Osaka" / "Ken is based in Osaka"
    difference = structural or worded
    if structural is Difference.TIME and (dated := _dated(new, old, worded, near)) is not None:
        return dated
    if difference is None:
        return Judgement(Verdict.SAME) if near else Judgement(Verdict.UNSURE)
    if difference not in _CONTENT_DIFFERENCES or not _about_the_same(new, old):
        return Judgement(Verdict.SIMILAR, difference)
    if difference is Difference.NEGATION and compare(_affirmed(new), _affirmed(old)) is None:
        return Judgement(Verdict.CONTRADICTS, difference)
    if difference in _CHANGED_VALUE:
        return Judgement(Verdict.CONFLICT, difference)
    return Judgement(Verdict.UNSURE, difference)


def _dated(new: Fact, old: Fact, worded: Difference | None, near: bool) -> Judgement | None:
    """What two statements dated on different days are by their words, if they say anything: the
    same words (near), a repeat; a changed number, name or negation about the same thing, a dated
    change, or a conflict when the new one says it changed ("rent goes up to £62"); other content
    words about the same thing, reworded or changed. None: only another time."""
    if worded is None:
        return Judgement(Verdict.REPEATED, Difference.TIME) if near else None
    if not _about_the_same(new, old):
        return None
    if worded in _CHANGED_VALUE:
        return Judgement(Verdict.CONFLICT if says_changed(new.content) else Verdict.DATED_CHANGE, worded)
    return Judgement(Verdict.UNSURE, worded) if worded is Difference.VALUE else None


def one_slot_apart(a: str, b: str) -> bool:
    """Whether two statements are one sentence with one slot filled differently: the words they
    share before and after one differing span outnumber the words of that span, on each side
    ("Send the report to Dana every Monday" / "... to Felix every Monday"). Such a pair is about
    one claim however far apart the embedding puts it (a name weighs much in a sentence vector)."""
    return slot_change(a, b) is not None


def slot_change(a: str, b: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The words (casefolded) of the one slot ``a`` and ``b`` fill differently, as ``a`` and as
    ``b`` fill it, when they are one slot apart (``one_slot_apart``); else None."""
    slot = _slot(a, b)
    return slot[1:] if slot is not None else None


def _slot(a: str, b: str) -> tuple[int, tuple[str, ...], tuple[str, ...]] | None:
    """``slot_change`` with the number of words before the slot."""
    x, y = words(a), words(b)
    shared = 0
    while shared < min(len(x), len(y)) and x[shared] == y[shared]:
        shared += 1
    tail = 0
    while tail < min(len(x), len(y)) - shared and x[-1 - tail] == y[-1 - tail]:
        tail += 1
    left, right = len(x) - shared - tail, len(y) - shared - tail
    if 0 < left < shared + tail and 0 < right < shared + tail:
        return shared, x[shared : len(x) - tail], y[shared : len(y) - tail]
    return None


def words(text: str) -> tuple[str, ...]:
    """The words of ``text`` as ``slot_change`` reads them (casefolded)."""
    return tuple(t.group().casefold() for t in _TOKEN.finditer(text))


def _same_claim(new: Fact, old: Fact) -> bool:
    """Both state a whole subject-predicate-object claim (``_structural`` found them equal)."""
    return all((new.subject, new.predicate, new.object, old.subject, old.predicate, old.object))


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
