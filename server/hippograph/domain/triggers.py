"""Triggers of negative memories: words that, when a question or context holds them, bring the
memory back as a warning whatever its rank ("never force-push to main" with trigger "force push").

A trigger is kept as a tag of its fact, ``trigger:`` and its words joined by ``-`` (so it is
stored, screened, exported and indexed as every tag is); it fires on a text that holds the same
words in the same order, whatever the case, the punctuation between them and a possessive ("git
push --force" fires "push force", not "force push"; "Friday's migration" fires "friday
migration"). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hippograph.domain.errors import InvalidInput
from hippograph.domain.validation import shown

PREFIX = "trigger:"
_WORD = re.compile(r"\w+")
_POSSESSIVE = re.compile(r"['’]s\b")  # "friday's migration" holds "friday migration"
_MAX_CHARS = 64 - len(PREFIX)  # a tag's length


def as_tag(value: object) -> str:
    """The tag that keeps trigger ``value``; InvalidInput when it cannot be one."""
    words = _words(value) if isinstance(value, str) else []
    if not words:
        raise InvalidInput(
            f"trigger {shown(value)} has no words: send the words a question would hold, e.g. 'force push'"
        )
    joined = "-".join(words)
    if len(joined) > _MAX_CHARS:
        raise InvalidInput(f"trigger {shown(value)} is over {_MAX_CHARS} characters: send its key words")
    return PREFIX + joined


def fired(tagged: Iterable[tuple[str, str]], text: str) -> list[tuple[str, str]]:
    """Of (fact id, tag) pairs, those whose trigger ``text`` holds, as (fact id, the trigger's
    words), in the order given."""
    held = f" {' '.join(_words(text))} "
    found = []
    for fact_id, tag in tagged:
        if not tag.startswith(PREFIX):
            continue
        # A tag kept before possessives were dropped may hold one's "s" ("trigger:friday-s-...").
        words = " ".join(w for w in tag[len(PREFIX) :].split("-") if w != "s")
        if words and f" {words} " in held:
            found.append((fact_id, words))
    return found


def _words(text: str) -> list[str]:
    """The words of ``text`` as triggers compare them: casefolded, possessives dropped."""
    return _WORD.findall(_POSSESSIVE.sub("", text.casefold()))
