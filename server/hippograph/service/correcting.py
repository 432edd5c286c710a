"""What a correction takes over from the fact it corrects: what it is about, and its copies.

A correction replaces a value. It stays about what the old fact was about ("My brother Casimir
lives in Tampere" -> "Casimir moved to Oulu" is still about the user), except the names of the
value it replaces; and a copy of the old statement (the same words, remembered on another day)
states the replaced value too, so it is superseded with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hippograph.domain import sameness
from hippograph.domain.models import ACTIVE_STATUSES, Fact
from hippograph.service.stores import Stores
from hippograph.store.seam import Filter

# Stored facts nearest the corrected one, among which its copies are looked for.
_NEAREST = 5


@dataclass(frozen=True)
class Correcting:
    """The fact a write corrects, and the ids of its copies (``copies_of``) found before it."""

    old: Fact
    copies: tuple[str, ...] = ()


def kept_about(old: Fact, content: str, about: Sequence[str], named: Sequence[str]) -> list[str]:
    """The names of ``about`` (what ``old`` is about) a correction reading ``content`` keeps, given
    the names ``named`` its text writes. It drops the value it replaces: the old ``object``; a name
    that filled the one slot the new text fills differently ("Mara leads the Atlas team" -> "...
    the Orion team"); and, when the new text writes a name the old one did not, each name of the
    old text it no longer mentions ("My manager is Harriet Vance" -> "My manager is Sunil Mehta,
    head of data at Brambleworks": not about Harriet Vance), but the name the old text opens with
    (its subject: "Mara leads Atlas" -> "She now leads Orion" is about Mara)."""
    change = sameness.slot_change(old.content, content)
    gone = set(change[0]) - set(change[1]) if change else set()
    before, after = set(sameness.words(old.content)), set(sameness.words(content))
    renamed = any(not set(sameness.words(name)) <= before for name in named)
    opening = sameness.words(old.content)

    def replaced(name: str) -> bool:
        words = sameness.words(name)
        if not words or not set(words) <= before or set(words) <= after:
            return False  # not written in the old text (the user, a given entity), or still named
        return opening[: len(words)] != words and opening[1 : len(words) + 1] != words

    return [
        name
        for name in about
        if name != old.object
        and not (gone and set(sameness.words(name)) <= gone)
        and not (renamed and replaced(name))
    ]


def copies_of(stores: Stores, old: Fact) -> tuple[str, ...]:
    """The ids of the active facts of ``old``'s scope that say what it says in the same words
    (``sameness.compare``), of its kind: remembered again on another day, kept as their own."""
    vector = stores.embedder.embed([old.content])
    where = Filter(statuses=ACTIVE_STATUSES, scopes=[old.scope])
    [hits] = stores.vectors.nearest("facts", vector, _NEAREST, where)
    found = stores.graph.get_facts([h.id for h in hits if h.id != old.id])
    return tuple(
        fact.id
        for fact in found.values()
        if fact.kind is old.kind and sameness.compare(fact.content, old.content) is None
    )
