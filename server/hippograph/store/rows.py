"""Graph rows to ``Fact``/``Entity`` values and back: the columns, their order, and times in UTC."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from hippograph.domain.models import (
    Entity,
    Fact,
    FactKind,
    FactStatus,
    Provenance,
    Source,
    TtlPolicy,
    name_key,
)

FACT_COLUMNS = (
    "id content kind status confidence source provenance scope created_at valid_from valid_until "
    "event_time last_accessed access_count pinned ttl_policy expires_at subject predicate object tags "
    "session_id evidence status_reason believed_until prior_status corroborations sources last_stated"
).split()
# The lifecycle fields: the only ones a stored fact changes in place (a purge also erases the
# text: store/graph.py ``purge_facts``).
FACT_STATE_COLUMNS = (
    "status",
    "confidence",
    "valid_until",
    "last_accessed",
    "access_count",
    "pinned",
    "expires_at",
    "status_reason",
    "believed_until",
    "prior_status",
    "source",
    "provenance",
    "evidence",
    "corroborations",
    "sources",
    "last_stated",
)
ENTITY_COLUMNS = "id name name_key type aliases summary mention_count first_seen last_mentioned scope".split()


def to_db_time(value: datetime | None) -> datetime | None:
    # Kùzu TIMESTAMP is naive; we store UTC and re-attach the zone on the way out.
    if value is None:
        return None
    return value.astimezone(UTC).replace(tzinfo=None)


def from_db_time(value: datetime | str | None) -> datetime | None:
    """A stored time (naive UTC, or its text: ``kuzu_columns.ColumnTypes.returning``) as an aware UTC time."""
    naive = naive_time(value)
    return naive.replace(tzinfo=UTC) if naive is not None else None


def naive_time(value: datetime | str | None) -> datetime | None:
    """A time the graph returned, as the naive UTC time it stores (text read back exactly)."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def fact_params(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.id,
        "content": fact.content,
        "kind": fact.kind.value,
        "status": fact.status.value,
        "confidence": float(fact.confidence),
        "source": fact.source.value,
        "provenance": fact.provenance.value,
        "scope": fact.scope,
        "created_at": to_db_time(fact.created_at),
        "valid_from": to_db_time(fact.valid_from),
        "valid_until": to_db_time(fact.valid_until),
        "event_time": to_db_time(fact.event_time),
        "last_accessed": to_db_time(fact.last_accessed),
        "access_count": int(fact.access_count),
        "pinned": bool(fact.pinned),
        "ttl_policy": fact.ttl_policy.value,
        "expires_at": to_db_time(fact.expires_at),
        "subject": fact.subject,
        "predicate": fact.predicate,
        "object": fact.object,
        "tags": list(fact.tags),
        "session_id": fact.session_id,
        "evidence": fact.evidence,
        "status_reason": fact.status_reason,
        "believed_until": to_db_time(fact.believed_until),
        "prior_status": fact.prior_status.value if fact.prior_status else None,
        "corroborations": int(fact.corroborations),
        "sources": [source.value for source in fact.sources],
        "last_stated": to_db_time(fact.last_stated),
    }


def fact_state_params(fact: Fact) -> dict[str, Any]:
    """The fact's id and lifecycle fields (``FACT_STATE_COLUMNS``)."""
    return {k: v for k, v in fact_params(fact).items() if k in (*FACT_STATE_COLUMNS, "id")}


def changed_states(
    facts: Sequence[Fact], held: Mapping[str, Fact]
) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    """The id and lifecycle fields of each of ``facts`` that differ from ``held``'s version of it
    (all of them, if it holds none), grouped by which fields: a fact's changed fields are what a
    SET must write (content and identity never change in place). Each column set stays in
    ladybug's memory until a checkpoint (``KuzuSession._settle``); a superseded fact changes 3
    of the 16."""
    changes: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for fact in facts:
        row = fact_state_params(fact)
        before = fact_state_params(held[fact.id]) if fact.id in held else {}
        changed = tuple(c for c in FACT_STATE_COLUMNS if c not in before or before[c] != row[c])
        if changed:
            changes.setdefault(changed, []).append({k: row[k] for k in ("id", *changed)})
    return changes


def fact_from_row(row: Mapping[str, Any]) -> Fact:
    return Fact(
        id=row["id"],
        content=row["content"],
        kind=FactKind(row["kind"]),
        status=FactStatus(row["status"]),
        confidence=float(row["confidence"]),
        source=Source(row["source"]),
        provenance=Provenance(row["provenance"]),
        scope=row["scope"],
        created_at=from_db_time(row["created_at"]),  # type: ignore[arg-type]
        valid_from=from_db_time(row["valid_from"]),  # type: ignore[arg-type]
        valid_until=from_db_time(row["valid_until"]),
        event_time=from_db_time(row["event_time"]),
        last_accessed=from_db_time(row["last_accessed"]),
        access_count=int(row["access_count"] or 0),
        pinned=bool(row["pinned"]),
        ttl_policy=TtlPolicy(row["ttl_policy"]),
        expires_at=from_db_time(row["expires_at"]),
        subject=row["subject"],
        predicate=row["predicate"],
        object=row["object"],
        tags=tuple(row["tags"] or ()),
        session_id=row["session_id"],
        evidence=row["evidence"],
        status_reason=row["status_reason"],
        believed_until=from_db_time(row["believed_until"]),
        prior_status=FactStatus(row["prior_status"]) if row["prior_status"] else None,
        corroborations=int(row.get("corroborations") or 1),
        sources=tuple(Source(s) for s in row.get("sources") or ()),
        last_stated=from_db_time(row.get("last_stated")),
    )


def facts_from_columns(columns: Mapping[str, list[Any]], start: int, stop: int) -> list[Fact]:
    """Rows ``start`` to ``stop`` of a whole-table read of ``FACT_COLUMNS``, as facts."""
    return [fact_from_row({c: columns[c][i] for c in FACT_COLUMNS}) for i in range(start, stop)]


def entity_params(entity: Entity) -> dict[str, Any]:
    return {
        "id": entity.id,
        "name": entity.name,
        "name_key": name_key(entity.name),
        "type": entity.type,
        "aliases": list(entity.aliases),
        "summary": entity.summary,
        "mention_count": entity.mention_count,
        "first_seen": to_db_time(entity.first_seen),
        "last_mentioned": to_db_time(entity.last_mentioned),
        "scope": entity.scope,
    }


def entity_from_row(row: Mapping[str, Any]) -> Entity:
    return Entity(
        id=row["id"],
        name=row["name"],
        type=row["type"],
        scope=row["scope"],
        aliases=tuple(row["aliases"] or ()),
        summary=row["summary"] or "",
        mention_count=int(row["mention_count"] or 0),
        first_seen=from_db_time(row["first_seen"]),
        last_mentioned=from_db_time(row["last_mentioned"]),
    )


def edge_props(props: Mapping[str, Any]) -> dict[str, Any]:
    """An edge's stored properties: Kùzu's internal ones (``_id``, ...) and nulls left out, its
    time (read as text: ``kuzu_columns.ColumnTypes.returning``) a naive UTC time, as Kùzu stores it."""
    kept = {k: v for k, v in props.items() if not k.startswith("_") and v is not None}
    if "created_at" in kept:
        kept["created_at"] = naive_time(kept["created_at"])
    return kept


def props_by_row(columns: Mapping[str, list[Any]], names: Sequence[str]) -> list[dict[str, Any]]:
    """Per row of a whole-table read, its ``names`` columns that are not null."""
    return [
        {n: v for n, v in zip(names, row, strict=True) if v is not None}
        for row in zip(*(columns[n] for n in names), strict=True)
    ]
