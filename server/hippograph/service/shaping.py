"""Shapes the service hands out and indexes: ids, times, fact and entity views, index text, why-lines."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from hippograph.domain import replies
from hippograph.domain.models import Entity, Fact, FactOut, SearchHit

Clock = Callable[[], datetime]

# How much of the turn before a conversation turn is indexed with it.
_CONTEXT_CHARS = 400


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value is not None else None


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def fact_out(fact: Fact, entity_names: Sequence[str]) -> FactOut:
    """A fact as callers see it."""
    return FactOut(
        id=fact.id,
        content=fact.content,
        kind=fact.kind.value,
        status=fact.status.value,
        confidence=round(fact.confidence, 4),
        scope=fact.scope,
        source=fact.source.value,
        tags=list(fact.tags),
        entities=list(entity_names),
        created_at=iso(fact.created_at) or "",
        event_time=iso(fact.event_time),
        valid_until=iso(fact.valid_until),
        session_id=fact.session_id,
        corroborations=fact.corroborations,
    )


def moment(value: datetime) -> str:
    """A time as a reply shows it: a date if it is midnight UTC (a date was given), else to the second."""
    value = value.astimezone(UTC)
    if value.time() == datetime.min.time():
        return value.date().isoformat()
    return value.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def search_hit(
    fact: Fact,
    *,
    status: str,
    score: float,
    relevance: float,
    entity_names: Sequence[str],
    contested_by: Sequence[str],
    reasons: dict[str, Any],
    detail: bool,
    replaces: str | None = None,
) -> SearchHit:
    """A search result: what a reader needs to use the fact; with ``detail``, all of it and why it matched."""
    more: dict[str, Any] = {}
    if detail:
        full = fact_out(fact, entity_names).model_dump(
            exclude={"id", "content", "kind", "status", "entities", "corroborations"}
        )
        more = {**full, "reasons": reasons}
    return SearchHit(
        id=fact.id,
        content=fact.content,
        kind=fact.kind.value,
        status=status,
        score=float(f"{score:.3g}"),
        relevance=round(relevance, 2),
        time=moment(fact.event_time or fact.created_at),
        entities=list(entity_names),
        contested_by=list(contested_by),
        corroborations=fact.corroborations,
        replaces=replaces,
        **more,
    )


def entity_text(entity: Entity) -> str:
    """What the entity index embeds for an entity: its name, aliases and summary."""
    return " / ".join((entity.name, *entity.aliases, entity.summary)).strip(" /")


def entity_row(entity: Entity) -> dict[str, Any]:
    """An entity's row in the vector index (without its vector)."""
    return {"id": entity.id, "text": entity_text(entity), "type": entity.type, "scope": entity.scope}


def index_text(fact: Fact, context: str | None) -> str:
    """What the vector and full-text index hold for a fact.

    A turn of a conversation ("Yes, last Tuesday!") often means nothing alone: it is indexed
    with the turn before it. Results show only its content.
    """
    if not context:
        return fact.content
    return f"{context[:_CONTEXT_CHARS]}\n{fact.content}"


def why(reasons: dict[str, Any]) -> str:
    """One line saying why a search hit is there, from its reasons."""
    parts = []
    for channel in ("vector", "fts", "window", "entity", "graph", "neighbour"):
        detail = reasons.get(channel)
        if not detail:
            continue
        if channel == "graph":
            via = f" via {detail['via_entity']}" if detail.get("via_entity") else ""
            parts.append(f"graph {detail['hops']} hop(s) over {detail['edge']}{via}")
        elif channel == "entity":
            parts.append(f"about {detail.get('via', 'a named entity')}")
        elif channel == "neighbour":
            parts.append("next to a match in its conversation")
        elif channel == "window":
            parts.append(f"#{detail['rank']} in the period asked about")
        else:
            parts.append(f"{channel} #{detail['rank']}")
    return ", ".join(parts) or "matched"


Measured = TypeVar("Measured", bound=BaseModel)


def measured(out: Measured, count: Callable[[str], int]) -> Measured:
    """``out`` with its ``tokens`` field set to the tokens of its own text (which holds that number)."""
    tokens = 0
    for _ in range(4):  # the number's own tokens can change the count; it settles at once
        measure = count(replies.text(out.model_copy(update={"tokens": tokens})))
        if measure == tokens:
            break
        tokens = measure
    return out.model_copy(update={"tokens": max(tokens, measure)})
