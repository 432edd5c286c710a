"""Moving memory in and out as JSON Lines: export, and import of hippograph's own format.

Two formats:

* hippograph's own (``export`` / ``import_hippograph``): a header line, then every entity,
  fact and edge with all their fields, so a store can be rebuilt exactly (ids, times,
  statuses, chains). Import is idempotent: what already exists is skipped.
* the reference MCP memory server's ``memory.jsonl`` (``import_mcp.import_mcp_memory``): entities with
  observations, and relations between them. Ids are derived from the content, so importing
  the same file again adds nothing.

Both imports read and check the whole input before writing anything: one bad line and the
caller gets ``InvalidInput`` naming the lines, with the store untouched. Secrets never reach
them: ``Memory.call`` screens every record first (``screening``). Rows go to the graph (the
source of truth) in batched transactions; the vector index is then brought up to date by
``Upkeep.reconcile``, the same repair that runs at start.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TextIO, TypeVar

from hippograph.domain.models import (
    EDGE_PROPS,
    FACT_EDGES,
    EdgeType,
    Entity,
    Fact,
    FactStatus,
)
from hippograph.service.records import (
    FORMAT,
    FORMAT_VERSION,
    Bad,
    Edge,
    Problems,
    check_header,
    decode_edge,
    decode_entity,
    decode_fact,
    json_lines,
)
from hippograph.service.shaping import iso
from hippograph.service.stores import Stores
from hippograph.service.upkeep import Upkeep
from hippograph.store.seam import EdgeRow, Relation

BATCH = 500  # rows per graph transaction: bounded memory in Kùzu, few commits

Progress = Callable[[int], None]
T = TypeVar("T")


@dataclass(frozen=True)
class ExportReport:
    entities: int
    facts: int
    edges: int


@dataclass(frozen=True)
class ImportReport:
    records: int  # entities, facts, edges (or entity and relation records) read from the input
    entities_added: int
    facts_added: int
    edges_added: int
    skipped_existing: int  # already in the store: same id, same name, or an identical edge


# ================================================================== export


def export(stores: Stores, out: TextIO) -> ExportReport:
    """Write the whole store to ``out`` as JSON Lines, in an order that depends only on its content."""
    with stores.write_lock:  # one snapshot: no edge to a fact written halfway through
        never = datetime.min.replace(tzinfo=UTC)
        entities = sorted(stores.graph.all_entities(), key=lambda e: (e.first_seen or never, e.id))
        stored = list(stores.graph.all_facts())
        # A purged fact was erased on request: its tombstone and the edges to it stay behind.
        purged = {f.id for f in stored if f.status is FactStatus.PURGED}
        facts = sorted((f for f in stored if f.id not in purged), key=lambda f: (f.created_at, f.id))
        # Edges in their ends' order of creation: an import writes them in file order, so the
        # edges the graph lists newest first (a tag's facts) come back in their first order.
        place = {e.id: n for n, e in enumerate(entities)} | {f.id: n for n, f in enumerate(facts)}
        edges = sorted(
            _edge_record(e, place)
            for e in stores.graph.census.all_edges()
            if e.src not in purged and e.dst not in purged
        )
        schema_version = stores.graph.schema_version()
    header = {"type": FORMAT, "version": FORMAT_VERSION, "schema_version": schema_version}
    out.write(json.dumps({**header, "exported_at": iso(stores.clock())}) + "\n")
    for entity in entities:
        # "type" says what the line is, so the entity's own type travels as entity_type.
        fields = {("entity_type" if k == "type" else k): v for k, v in _plain(entity).items()}
        out.write(json.dumps({"type": "entity", **fields}, ensure_ascii=False) + "\n")
    for fact in facts:
        out.write(json.dumps({"type": "fact", **_plain(fact)}, ensure_ascii=False) + "\n")
    for _, line in edges:
        out.write(line + "\n")
    return ExportReport(entities=len(entities), facts=len(facts), edges=len(edges))


def _plain(value: Fact | Entity) -> dict[str, Any]:
    return {f.name: _json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(value if value.tzinfo else value.replace(tzinfo=UTC))  # Kùzu edge props come naive
    if isinstance(value, StrEnum):
        return value.value
    return list(value) if isinstance(value, tuple) else value


def _edge_record(edge: EdgeRow, place: dict[str, int]) -> tuple[tuple[int, int, str, int, str, str], str]:
    props = {k: _json_value(v) for k, v in sorted(edge.props.items())}
    record = {"type": "edge", "edge": edge.type, "from": edge.src, "to": edge.dst, "props": props}
    order = list(EDGE_PROPS).index(EdgeType(edge.type)) if edge.type in EDGE_PROPS else len(EDGE_PROPS)
    line = json.dumps(record, ensure_ascii=False)
    return (order, place.get(edge.src, -1), edge.src, place.get(edge.dst, -1), edge.dst, line), line


# ================================================================== hippograph import


def import_hippograph(
    stores: Stores, upkeep: Upkeep, lines: Iterable[str], progress: Progress | None = None
) -> ImportReport:
    """Restore a hippograph export exactly; what the store already has (same id, same edge) is skipped.

    ``progress`` is called after each batch with the number of records handled so far.
    """
    problems = Problems()
    entities: list[Entity] = []
    facts: list[Fact] = []
    edges: list[tuple[str, Edge]] = []
    defined: dict[str, str] = {}  # id -> where the file defines it
    records = json_lines(lines, problems)
    first = next(records, None)
    try:
        check_header(first[1] if first else None, stores.graph.schema_version())
    except Bad as err:
        problems.add(first[0] if first else "line 1", str(err))
        problems.raise_if_any("hippograph export")  # the rest would be noise
    for where, record in records:
        try:
            kind = record.get("type") if isinstance(record, dict) else None
            if kind == "edge":
                edges.append((where, decode_edge(record)))
            elif kind == "entity":
                entities.append(_define(defined, decode_entity(record), where))
            elif kind == "fact":
                facts.append(_define(defined, decode_fact(record), where))
            else:
                raise Bad(f"type {kind!r:.60} is not known: each line is an entity, fact or edge object")
        except Bad as err:
            problems.add(where, str(err))
    problems.raise_if_any("hippograph export")
    return restore(stores, upkeep, entities, facts, edges, progress)


def restore(
    stores: Stores,
    upkeep: Upkeep,
    entities: Sequence[Entity],
    facts: Sequence[Fact],
    edges: Sequence[tuple[str, Edge]],
    progress: Progress | None = None,
) -> ImportReport:
    """Write checked records: what the store already has is skipped, and an edge whose end is
    neither among them nor stored is refused (``InvalidInput``) before anything is written.

    ``edges`` pairs each edge with where it came from, for the error. The vector index is
    brought up to date after the graph commits.
    """
    problems = Problems()
    defined = {e.id for e in entities} | {f.id for f in facts}
    with stores.write_lock:  # nothing else writes between the existence checks and the writes
        graph = stores.graph
        stored = graph.fact_ids() | {e.id for e in graph.all_entities()}
        for where, edge in edges:
            for end in (edge.src,) if edge.type == EdgeType.HAS_TAG else (edge.src, edge.dst):
                if end not in defined and end not in stored:
                    problems.add(
                        where, f"{edge.type} edge names {end}, which is neither in the file nor stored"
                    )
        problems.raise_if_any("hippograph export")

        new_entities = [e for e in entities if e.id not in stored]
        new_facts = [f for f in facts if f.id not in stored]
        # A multiset, not a set: a store may hold the same edge twice, and a round trip keeps both.
        existing = Counter(Edge(e.type, e.src, e.dst, dict(e.props)).key for e in graph.census.all_edges())
        new_edges: list[Edge] = []
        for _, edge in edges:
            if existing[edge.key] > 0:
                existing[edge.key] -= 1
            else:
                new_edges.append(edge)

        now = stores.clock()
        done = write_batches(stores, new_entities, graph.insert_entities, progress, 0)
        done = write_batches(stores, new_facts, graph.insert_facts, progress, done)
        write_batches(stores, new_edges, lambda batch: _create_edges(stores, batch, now), progress, done)
        # Committed: only now may the vector index see the new rows.
        for scope, session in {(f.scope, f.session_id) for f in new_facts if f.session_id}:
            stores.sessions.forget(scope, session)  # the cached tail may predate the imported facts
        upkeep.reconcile()
    added = len(new_entities) + len(new_facts) + len(new_edges)
    return ImportReport(
        records=len(entities) + len(facts) + len(edges),
        entities_added=len(new_entities),
        facts_added=len(new_facts),
        edges_added=len(new_edges),
        skipped_existing=len(entities) + len(facts) + len(edges) - added,
    )


N = TypeVar("N", Entity, Fact)


def _define(defined: dict[str, str], node: N, where: str) -> N:
    if node.id in defined:
        raise Bad(f"id {node.id} is already defined on {defined[node.id]}")
    defined[node.id] = where
    return node


def _create_edges(stores: Stores, edges: Sequence[Edge], now: datetime) -> None:
    graph = stores.graph
    graph.link_about_many([(e.src, e.dst, e.props["role"]) for e in edges if e.type == EdgeType.ABOUT])
    graph.link_entities_many(
        [
            Relation(
                e.src,
                e.dst,
                e.props["predicate"],
                e.props.get("weight", 1.0),
                e.props.get("fact_id"),
                e.created_at or now,
            )
            for e in edges
            if e.type == EdgeType.RELATES
        ]
    )
    graph.tag_facts([(e.src, e.dst) for e in edges if e.type == EdgeType.HAS_TAG])
    for edge_type in FACT_EDGES:
        # These CREATE; the caller has already dropped edges the store holds.
        links = [(e.src, e.dst, e.created_at or now, e.props) for e in edges if e.type == edge_type]
        graph.link_facts_many(edge_type, links)


def write_batches(
    stores: Stores,
    items: Sequence[T],
    write: Callable[[Sequence[T]], object],
    progress: Progress | None,
    done: int,
) -> int:
    """``write`` the items a batch at a time, one graph transaction each; report progress after each."""
    for start in range(0, len(items), BATCH):
        batch = items[start : start + BATCH]
        with stores.graph.transaction():
            write(batch)
        done += len(batch)
        if progress is not None:
            progress(done)
    return done
