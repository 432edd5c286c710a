"""Triggers of negative memories: words that, when a question or context holds them, bring the
memory back as a warning whatever its rank ("never force-push to main" with trigger "force push").

A trigger is kept as a tag of its fact, ``trigger:`` and its words joined by ``-`` (so it is
stored, screened, exported and indexed as every tag is); it fires on a text that holds the same
words in the same order, whatever the case and the punctuation between them ("git push --force"
fires "push force", not "force push"). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hippograph.domain.errors import InvalidInput
from hippograph.domain.validation import shown

PREFIX = "trigger:"
_WORD = re.compile(r"\w+")
_MAX_CHARS = 64 - len(PREFIX)  # a tag's length


def as_tag(value: object) -> str:
    """The tag that keeps trigger ``value``; InvalidInput when it cannot be one."""
    words = _WORD.findall(value.casefold()) if isinstance(value, str) else []
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
    held = f" {' '.join(_WORD.findall(text.casefold()))} "
    found = []
    for fact_id, tag in tagged:
        if not tag.startswith(PREFIX):
            continue
        words = tag[len(PREFIX) :].replace("-", " ")
        if words and f" {words} " in held:
            found.append((fact_id, words))
    return found
