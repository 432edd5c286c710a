"""Which entities a new fact is about: subject, object, the names given and known names it mentions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from hippograph.domain.models import Entity, Fact
from hippograph.service.shaping import new_id
from hippograph.store.entity_index import EntityIndex


def plan_entities(
    fact: Fact, explicit: Sequence[str], now: datetime, index: EntityIndex
) -> tuple[list[tuple[str, Entity]], list[Entity]]:
    """Which entities the fact is ABOUT (role, entity), and which of them are new."""
    linked: list[tuple[str, Entity]] = []
    created: list[Entity] = []

    def resolve(name: str, create: bool) -> Entity | None:
        found = index.resolve(name, fact.scope)
        if found is None:
            found = next((e for e in created if e.name.casefold() == name.casefold()), None)
        if found is None and create:
            found = Entity(
                id=new_id("e"),
                name=name,
                type="concept",
                scope=fact.scope,
                mention_count=1,
                first_seen=now,
                last_mentioned=now,
            )
            created.append(found)
        return found

    def add(role: str, entity: Entity | None) -> None:
        if entity is not None and all(entity.id != e.id for _, e in linked):
            linked.append((role, entity))

    if fact.subject:
        add("subject", resolve(fact.subject, create=True))
    if fact.object:
        add("object", resolve(fact.object, create=fact.object in explicit))
    for name in explicit:
        add("mention", resolve(name, create=True))
    for entity in index.mentions(fact.content, fact.scope):
        add("mention", entity)
    return linked, created
