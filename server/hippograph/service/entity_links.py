"""Which entities a new fact is about: subject, object, the names given, and the names its text holds.

Names in the text come from ``store.ner.NameFinder`` (found before the write lock is taken)
and from the entity index (known names and aliases, and known people by first name). A name
resolves to an entity the fact's scope sees: by exact name or alias first, else by first name
when exactly one person answers to it ("Priya" -> "Priya Raman"), or after a title by last
name ("Dr. Lee" -> "Helen Lee"); only a name that resolves to
nothing makes a new entity, typed as the recogniser typed it (``concept`` if unknown). A later
sentence types a known entity anew where it had no type, or where it states one. A fact
in the user's own voice (or naming "the user") mentions the owner entity, "the user", of its
scope (``names.about_owner``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime

from hippograph.domain.models import Entity, Fact, name_key
from hippograph.service.shaping import new_id
from hippograph.store.entity_index import EntityIndex
from hippograph.text.name_cues import title_before
from hippograph.text.names import OWNER, UNKNOWN_TYPE, Name, about_owner

_FIRST_NAMED = frozenset({"person", UNKNOWN_TYPE})  # as the entity index's first-name rule
_TYPED = frozenset({"person", "place", "organization", "tool"})  # the types a later sentence may fix


def plan_entities(
    fact: Fact, explicit: Sequence[str], now: datetime, index: EntityIndex, found: Sequence[Name] = ()
) -> tuple[list[tuple[str, Entity]], list[Entity], dict[str, str]]:
    """Which entities the fact is ABOUT (role, entity), which of them are new, and which known
    ones its text types anew (entity id -> type; they are linked with that type)."""
    linked: list[tuple[str, Entity]] = []
    created: list[Entity] = []
    retyped: dict[str, str] = {}
    # A name the caller gave that the text also holds takes the type found for it there.
    types = {name_key(n.text): n.type for n in found}

    def resolve(name: str, create: bool, kind: str | None = None, titled: bool = False) -> Entity | None:
        key = name_key(name)
        entity = index.resolve(name, fact.scope)
        if entity is None:
            entity = next((e for e in created if name_key(e.name) == key), None)
        if entity is None:
            entity = index.by_first_name(name, fact.scope) or _by_first_name(key, created)
        if entity is None and titled:  # "Dr. Lee" is the one known person whose last name is Lee
            entity = index.by_surname(name, fact.scope)
        if entity is None and create:
            entity = Entity(
                id=new_id("e"),
                name=name,
                type=kind or types.get(key, UNKNOWN_TYPE),
                scope=fact.scope,
                mention_count=1,
                first_seen=now,
                last_mentioned=now,
            )
            created.append(entity)
        return entity

    def add(role: str, entity: Entity | None) -> None:
        if entity is not None and all(entity.id != e.id for _, e in linked):
            linked.append((role, entity))

    # A chat turn is its speaker's: "Joanna: ..." is about Joanna, whoever else it names.
    speaker = next((n for n in found if n.how == "speaker"), None)
    if fact.subject:
        add("subject", resolve(fact.subject, create=True))
    elif speaker is not None:
        add("subject", resolve(speaker.text, create=True, kind=speaker.type))
    if fact.object:
        add("object", resolve(fact.object, create=fact.object in explicit))
    for name in explicit:
        add("mention", resolve(name, create=True))
    mentioned = index.mentions(fact.content, fact.scope)
    # Full names before single words: "Priya Raman ... Priya" makes one entity, not two. A name
    # inside a known one the text mentions ("apollo" in "project apollo") is that entity.
    for named in sorted(found, key=lambda n: -len(n.text.split())):
        key = f" {name_key(named.text)} "
        inside = next((e for e in mentioned if key in f" {name_key(e.name)} "), None)
        titled = title_before(fact.content[: named.start]) is not None
        entity = inside or resolve(named.text, create=True, kind=named.type, titled=titled)
        whole = inside is None or f" {name_key(inside.name)} " == key  # the name, not a part of one
        if entity is not None and whole and entity not in created and _types_anew(entity, named):
            entity = dataclasses.replace(entity, type=named.type)
            retyped[entity.id] = entity.type
        add("mention", entity)
    for entity in mentioned:
        add("mention", entity)
    if speaker is None and about_owner(fact.content):
        add("mention", resolve(OWNER, create=True, kind="person"))
    return linked, created, retyped


def _types_anew(entity: Entity, name: Name) -> bool:
    """Whether a later sentence's ``name`` fixes the known ``entity``'s type: any of the four
    types where it had none (``concept``: the first sentence did not tell), and the type a
    sentence states ("her startup, Loomcraft") over one that was guessed."""
    if name.type not in _TYPED or name.type == entity.type:
        return False
    return entity.type == UNKNOWN_TYPE or name.how == "cue"


def _by_first_name(key: str, created: Sequence[Entity]) -> Entity | None:
    """The one entity made for this fact whose name of several words starts with ``key``."""
    if " " in key:
        return None
    named = [
        e for e in created if e.type in _FIRST_NAMED and name_key(e.name).split()[0] == key and " " in e.name
    ]
    return named[0] if len(named) == 1 else None
