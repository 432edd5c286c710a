"""The type the words around a name imply: "a hotel near Shibuya", "my first job was at IBM",
"the tickets are tracked in Jira", "keep Wojciech in the loop", "we bank with Monzo".

The recogniser and the name typer (``store/name_typing.py``) weigh a name's shape and the meaning
of its sentence as a whole, and miss what one phrase settles: a name they have not seen comes out
a person ("Shibuya", "Monzo") or nothing. A frame is a preposition or verb that takes only one of
the four types in ordinary use: people are told and reminded, places are lived in and stayed
near, organisations employ and bank, tools run things and track them. Phrases that take two
types are left out ("moved to" a city or a queue, "worked with" a colleague or a library,
"switched to" a bank or an editor, a bare "at" or "with"), and so is a name that only qualifies
the word after it ("at the Berlin office", "Stripe support", "Sarah's laptop"): there the typer
decides, or the type stays neutral.

A frame is weaker than a cue (``name_cues.py``: what a sentence states a name is) and stronger
than a guess: it types a new name, and an entity whose type was neutral, never one already typed.
Pure: no I/O, no model.
"""

from __future__ import annotations

import re

from hippograph.text.name_cues import kind_of

__all__ = ["framed_type"]

_WORD = r"[\w'’-]+"
# Up to five words between a verb or noun and its preposition ("outsourced support to",
# "joined the security team at", "migrated the search index from Sorrel to").
_GAP = rf"(?:\s+{_WORD}){{0,5}}?"


def _words(words: str) -> str:
    return "|".join(words.split())


def _frame(triggers: str, prepositions: str = "", *, gap: str = _GAP, the: bool = False) -> str:
    """A pattern for the end of the text before a name: one of ``triggers``, then (with
    ``prepositions``) ``gap`` (up to five words) and one of those prepositions, then (with
    ``the``) maybe "the"."""
    head = rf"\b(?:{_words(triggers)})"
    article = r"(?:the\s+)?" if the else ""
    if not prepositions:
        return rf"{head}\s+{article}$"
    return rf"{head}{gap}\s+(?:{_words(prepositions)})\s+{article}$"


_NO_GAP = ""
_COPULA = r"(?:\s+(?:is|was|are|were))?"


_BEFORE = {
    "place": [
        _frame("near nearby outside", the=True),
        _frame("climb climbed climbing summited", the=True),
        r"\b(?:outside|north|south|east|west)\s+of\s+$",
        _frame(
            """lived living born based raised settled stay stays stayed staying located holiday
            holidays holidaying vacation vacationing honeymoon camping hiking skiing""",
            "in near",
            gap=_NO_GAP,
            the=True,
        ),
        _frame(
            "land lands landed landing connect connects connecting layover stopover",
            "at through in",
            gap=_NO_GAP,
        ),
        r"\bgrew\s+up\s+(?:in|near)\s+$",
        # "live in" takes people ("my sister lives in Cork"), but also files ("designs live in Figma").
        r"""(?x)\b(?:i|we|you|they|he|she|who|mum|mom|dad|parents|family|sister|brother|grandma|
        grandpa|aunt|uncle|cousin|friend|friends|son|daughter|kids)\s+(?:still\s+|now\s+)?
        (?:live|lives)\s+(?:in|near)\s+$""",
        _frame(
            """trip trips flight flights flew fly flies flying travel travels travelled traveled
            travelling traveling drive drove driving commute commuting relocate relocated
            relocating emigrate emigrated ferry train cycle cycled cycling cycle ride rode riding
            bike biked biking walk walked walking hike hiked retire retired retiring""",
            "to from",
            the=True,
        ),
        _frame(
            """apartment flat house hotel hostel cabin cottage farmhouse villa playground restaurant
            cafe café bar pub museum gym beach park campsite neighbourhood neighborhood village
            town conference wedding place spot shop store bakery office offices address rent rents
            flats houses""",
            "in near on",
            gap=_COPULA,
            the=True,
        ),
    ],
    "person": [
        _frame(
            """tell told telling ask asked asking remind reminded reminding thank thanked ping
            pinged cc email emailed text texted message messaged invite invited congratulate
            congratulated introduce introduced mentor mentored mentoring marry married dating
            hug hugged"""
        ),
        _frame("give gave giving hand handed show showed lend lent send sent sending", "to"),
        _frame("borrow borrowed borrowing", "from", gap=_GAP),
        r"\bloop\s+in\s+$",
    ],
    "organization": [
        _frame(
            """job jobs work works worked working intern interned interning internship employed
            hired interview interviews interviewed interviewing position role career joined join
            joining phd degree masters study studied studies studying graduated""",
            "at for by from",
            the=True,
        ),
        _frame("play plays played playing", "for", gap=_NO_GAP, the=True),
        _frame(
            """bank banks banked banking insured insurance mortgage account accounts subscription
            membership partnered partnership contract contracts deal agreement sponsored funded
            acquired customer customers client clients donate donated donating donation volunteer
            volunteers volunteered volunteering outsource outsourced outsourcing insurer insurers
            provider providers supplier suppliers complaint complaints complain complained""",
            "with by at to from of through",
            the=True,
        ),
        _frame("buy buys bought buying order orders ordered ordering purchase purchased", "through"),
        _frame("order orders ordered ordering purchase purchased", "from"),
    ],
    "tool": [
        _frame(
            """use uses used using install installs installed installing adopt adopted adopting
            configure configured configuring upgrade upgraded upgrading deprecate deprecated build
            compile compiled compiling"""
        ),
        _frame(
            """run runs running ran host hosted hosting deploy deploys deployed deploying route
            routes routed piped automate automated manage manages managed monitor monitors
            monitored track tracks tracked tracking log logs logged store stores stored sync
            synced""",
            "on via through using",
        ),
        _frame(
            """track tracks tracked tracking manage manages managed monitor monitored automated
            build builds built building replace replaced replacing""",
            "with",
        ),
        _frame(
            """written write writes wrote coded implemented scripted tracked tracking logged
            documented stored configured defined modelled modeled designed""",
            "in",
        ),
        _frame(
            """migrate migrates migrated migrating port ported porting upgrade upgraded upgrading
            convert converted converting sync syncs synced syncing backed upload uploaded
            uploading""",
            "to from into",
        ),
        # What lives in a tool is a thing kept there ("the grocery list lives in AnyList").
        r"""(?x)\b(?:list|lists|file|files|doc|docs|document|documents|notes|code|config|designs|
        specs|data|photos|recipes|passwords|tasks|todos|calendar|backups|tickets|dashboards|logs)
        \s+(?:still\s+|now\s+|all\s+)?(?:live|lives)\s+in\s+$""",
    ],
}
_BEFORE_RE = {kind: [re.compile(p, re.IGNORECASE) for p in patterns] for kind, patterns in _BEFORE.items()}
# A name the next word qualifies is no object of the frame ("emailed Stripe support"): a frame
# types a name followed by a mark, the text's end, a function word or a word with a verb's or a
# plural's ending ("Initech renews", "Dana joined"). "at the Berlin office" has no frame at all:
# a frame's preposition or verb comes right before the name.
_CLOSED = re.compile(
    r"""(?ix)^(?:\s*(?:[,.;:!?)"]|$)|\s+(?:
        about|to|that|for|in|on|at|and|or|but|before|after|if|when|whether|since|until|this|
        last|next|every|each|the|a|an|we|i|he|she|they|you|it|his|her|our|my|their|your|
        now|today|yesterday|tomorrow|again|too|also|instead|soon|already|once|twice|because|
        so|then|with|from|into|by|via|of|is|was|are|were|will|would|can|could|should|has|had|have|
        back|up|over|out|later|earlier|first|yet|still|these|those|all|both|rather|than|not|as|
        whenever|while|who|which|where|just|right|around|early|late|except|
        [a-z]+(?:s|ed|ing|ly)
    )\b)"""
)
# Words after a name that make it a tool ("the Grafana dashboard", "the #standup Slack huddle").
_TOOL_AFTER = re.compile(
    r"""(?ix)^\s+(?:plugin|plugins|integration|integrations|api|sdk|cli|dashboard|dashboards|
    extension|extensions|workspace|workspaces|bot|bots|webhook|webhooks|query|queries|config|
    configuration|pipeline|pipelines|repo|repos|repository|notebook|notebooks|channel|channels|
    huddle|ticket|tickets|topic|topics|spreadsheet|spreadsheets|template|templates|consumer|
    consumers|producer|producers|deck|decks)\b"""
)
# "keep Wojciech in the loop", "keeping Dana posted": a person, where "keep Terraform pinned" is not.
_KEPT = re.compile(r"(?i)\b(?:keep|keeps|keeping|kept)\s+$")
_KEPT_AFTER = re.compile(r"(?i)^\s+(?:in\s+the\s+loop|posted|informed|updated)\b")
# What the words after a name say it is: "Sydney from accounting", "Hamish is vegetarian".
_AFTER = {
    "person": re.compile(
        r"""(?ix)^\s+(?:from\s+(?:the\s+)?(?:[\w-]+\s+)?(?:office|team|accounting|finance|legal|hr|
        marketing|sales|support|engineering|design|it|ops|procurement|payroll|admissions)\b|
        (?:is|was)\s+(?:vegetarian|vegan|allergic|pregnant|lactose|gluten)|
        (?:thinks|thought|loves|hates|feels|felt|prefers)\b|
        (?:lent|taught|owes|owed)\s+(?:me|us)\b|said\s+(?:she|he)\b|and\s+(?:his|her)\b|
        joined\s+(?:the|our|my|their|his|her)\s+(?:[\w-]+\s+)?team\b)"""
    ),
    "organization": re.compile(r"(?i)^\s+(?:keeps\s+)?(?:charg|bill)(?:es|ed|ing|s)?\s+(?:me|us)\b"),
}
# "our accountants at Pemberton Voss", "my friend at Google": where a person works.
_ROLE_AT = re.compile(r"(?i)\b(?P<noun>[\w'’-]+)\s+at\s+(?:the\s+)?$")
# The sentence's clause before the name: a frame does not reach over a sentence's end.
_CLAUSE = re.compile(r"[.;!?]\s")
_REACH = 80


def framed_type(text: str, start: int, end: int) -> str | None:
    """The type the words around the name at ``text[start:end]`` imply, or None where they
    imply none or more than one."""
    name = text[start:end]
    if any(mark in name for mark in "_./\\") or not name[:1].isupper():
        return None  # code and file names, lowercase words: what they are is their own
    before = text[max(0, start - _REACH) : start]
    clause = _CLAUSE.split(before)[-1]
    after = text[end : end + 40]
    kinds = set()
    if _CLOSED.match(after):
        kinds = {kind for kind, patterns in _BEFORE_RE.items() if any(p.search(clause) for p in patterns)}
    if _TOOL_AFTER.match(after):
        kinds.add("tool")
    if _KEPT.search(clause) and _KEPT_AFTER.match(after):
        kinds.add("person")
    kinds.update(kind for kind, pattern in _AFTER.items() if pattern.match(after))
    role = _ROLE_AT.search(clause)
    if role and kind_of(role.group("noun")) == "person":
        kinds.add("organization")
    return kinds.pop() if len(kinds) == 1 else None
