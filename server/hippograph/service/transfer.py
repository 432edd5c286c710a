"""Moving memory in and out as JSON Lines.

Two formats:

* hippograph's own (``export`` / ``import_hippograph``): a header line, then every entity,
  fact and edge with all their fields, so a store can be rebuilt exactly (ids, times,
  statuses, chains). Import is idempotent: what already exists is skipped.
* the reference MCP memory server's ``memory.jsonl`` (``import_mcp_memory``): entities with
  observations, and relations between them. Ids are derived from the content, so importing
  the same file again adds nothing.

Both imports read and check the whole input before writing anything: one bad line, or a
secret anywhere, and the caller gets ``InvalidInput`` naming the lines, with the store
untouched. Rows go to the graph (the source of truth) in batched transactions; the vector
index is then brought up to date by ``Memory.reconcile``, the same repair that runs at start.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TextIO, TypeVar

from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import (
    EDGE_PROPS,
    FACT_EDGES,
    EdgeType,
    Entity,
    Fact,
    FactKind,
    FactStatus,
    Provenance,
    Source,
    TtlPolicy,
    name_key,
)
from hippograph.service.memory import Memory, iso
from hippograph.store.entity_index import EntityIndex
from hippograph.store.graph import EdgeRow, Relation

try:  # the scanner may be missing from a build; then imports go unscanned, as remember would
    from hippograph.text import secrets_scan as _secrets
except ImportError:  # pragma: no cover - depends on the build
    _secrets = None  # type: ignore[assignment]

FORMAT, FORMAT_VERSION = "hippograph", 1
BATCH = 500  # rows per graph transaction: bounded memory in Kùzu, few commits
_SHOWN_ERRORS = 5

Progress = Callable[[int], None]
T = TypeVar("T")

_TIMED_EDGES = {*FACT_EDGES, "RELATES"}
_ROLES = ("subject", "object", "mention")


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


def export(memory: Memory, out: TextIO) -> ExportReport:
    """Write the whole store to ``out`` as JSON Lines, in an order that depends only on its content."""
    memory.apply_accesses()  # recorded reads count: export what memory believes now
    with memory._write_lock:  # one snapshot: no edge to a fact written halfway through
        never = datetime.min.replace(tzinfo=UTC)
        entities = sorted(memory.graph.all_entities(), key=lambda e: (e.first_seen or never, e.id))
        facts = sorted(memory.graph.all_facts(), key=lambda f: (f.created_at, f.id))
        edges = sorted(_edge_record(e) for e in memory.graph.all_edges())
        schema_version = memory.graph.schema_version()
    header = {"type": FORMAT, "version": FORMAT_VERSION, "schema_version": schema_version}
    out.write(json.dumps({**header, "exported_at": iso(memory.clock())}) + "\n")
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


def _edge_record(edge: EdgeRow) -> tuple[tuple[int, str, str, str], str]:
    props = {k: _json_value(v) for k, v in sorted(edge.props.items())}
    record = {"type": "edge", "edge": edge.type, "from": edge.src, "to": edge.dst, "props": props}
    order = list(EDGE_PROPS).index(EdgeType(edge.type)) if edge.type in EDGE_PROPS else len(EDGE_PROPS)
    line = json.dumps(record, ensure_ascii=False)
    return (order, edge.src, edge.dst, line), line


# ================================================================== checking input


class _Bad(ValueError):
    """One thing wrong with one record: collected with its line, reported all together."""


class _Problems:
    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def add(self, where: str, message: str) -> None:
        self.found.append((where, message))

    def raise_if_any(self, what: str) -> None:
        if not self.found:
            return
        shown = "; ".join(f"{where}: {message}" for where, message in self.found[:_SHOWN_ERRORS])
        more = f"; and {len(self.found) - _SHOWN_ERRORS} more" if len(self.found) > _SHOWN_ERRORS else ""
        raise InvalidInput(
            f"cannot import this {what}: {len(self.found)} bad record(s), nothing was written. "
            f"{shown}{more}. Fix or remove those lines and import again."
        )


def _json_lines(lines: Iterable[str], problems: _Problems) -> Iterator[tuple[str, Any]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue  # blank lines (a trailing newline, hand edits) carry nothing
        try:
            yield f"line {number}", json.loads(line)
        except json.JSONDecodeError as err:
            problems.add(f"line {number}", f"not valid JSON ({err.msg} at column {err.colno})")


def _refuse_secret(text: str | None, field: str) -> None:
    findings = _secrets.scan(text) if _secrets is not None and text else []
    if findings:
        kinds = ", ".join(sorted({getattr(f, "kind", "secret") for f in findings}))
        # Name the kind and the field, never the secret itself.
        raise _Bad(f"{field} contains {kinds}; hippograph never stores credentials: remove it from the file")


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Bad(f"{field} must be a non-empty string, got {value!r:.60}")
    return value


def _optional_text(value: Any, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _Bad(f"{field} must be a string or null, got {value!r:.60}")
    return value


def _name(value: Any, field: str) -> str:
    if not name_key(_text(value, field)):
        raise _Bad(f"{field} {value!r:.60} needs at least one letter or digit")
    return str(value).strip()


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise _Bad(f"{field} must be a number, got {value!r:.60}")
    return float(value)


def _unit(value: Any, field: str) -> float:
    if not 0.0 <= _number(value, field) <= 1.0:
        raise _Bad(f"{field} {value} is outside 0..1")
    return float(value)


def _count(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Bad(f"{field} must be a whole number >= 0, got {value!r:.60}")
    return value


def _flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise _Bad(f"{field} must be true or false, got {value!r:.60}")
    return value


def _strings(value: Any, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Bad(f"{field} must be a list of strings")
    return tuple(value)


def _time(value: Any, field: str) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise _Bad(f"{field} {value!r:.60} is not an ISO 8601 time like 2024-05-08T09:30:00Z")
    if parsed.tzinfo is None:
        raise _Bad(f"{field} {value!r:.60} has no time zone: add Z for UTC")
    return parsed.astimezone(UTC)


def _required_time(value: Any, field: str) -> datetime:
    parsed = _time(value, field)
    if parsed is None:
        raise _Bad(f"{field} must be a time, not null")
    return parsed


def _scope(value: Any, field: str) -> str:
    try:
        return check.scope(_text(value, field))
    except InvalidInput as err:
        raise _Bad(str(err)) from None


def _enum(enum: type[StrEnum]) -> Callable[[Any, str], StrEnum]:
    def convert(value: Any, field: str) -> StrEnum:
        try:
            return enum(value)
        except ValueError:
            allowed = ", ".join(m.value for m in enum)
            raise _Bad(f"{field} {value!r:.60} is not known: use one of {allowed}") from None

    return convert


def _id(prefix: str) -> Callable[[Any, str], str]:
    def convert(value: Any, field: str) -> str:
        try:
            if isinstance(value, str) and value.startswith(prefix + "_"):
                return check.node_id(value, field)
        except InvalidInput:
            pass
        raise _Bad(f"{field} {value!r:.60} is not {'a fact' if prefix == 'f' else 'an entity'} id")

    return convert


Convert = Callable[[Any, str], Any]
_FACT_SPEC: dict[str, Convert] = {
    "id": _id("f"),
    "content": _text,
    "kind": _enum(FactKind),
    "status": _enum(FactStatus),
    "confidence": _unit,
    "source": _enum(Source),
    "provenance": _enum(Provenance),
    "scope": _scope,
    "created_at": _required_time,
    "valid_from": _required_time,
    "valid_until": _time,
    "event_time": _time,
    "last_accessed": _time,
    "access_count": _count,
    "pinned": _flag,
    "ttl_policy": _enum(TtlPolicy),
    "expires_at": _time,
    **dict.fromkeys(
        ("subject", "predicate", "object", "session_id", "evidence", "status_reason"), _optional_text
    ),
    "tags": _strings,
}
_ENTITY_SPEC: dict[str, Convert] = {
    "id": _id("e"),
    "name": _name,
    "entity_type": _text,
    "scope": _scope,
    "aliases": _strings,
    "summary": lambda value, field: _optional_text(value, field) or "",
    "mention_count": _count,
    "first_seen": _time,
    "last_mentioned": _time,
}


def _decode(record: dict[str, Any], spec: dict[str, Convert], required: Iterable[str]) -> dict[str, Any]:
    unknown = sorted(set(record) - set(spec) - {"type"})
    if unknown:
        raise _Bad(f"unknown field(s) {', '.join(unknown)}")
    missing = [name for name in required if name not in record]
    if missing:
        raise _Bad(f"missing field(s) {', '.join(missing)}")
    return {name: spec[name](value, name) for name, value in record.items() if name != "type"}


_FACT_REQUIRED = [f.name for f in dataclasses.fields(Fact) if f.default is dataclasses.MISSING]


def _decode_fact(record: dict[str, Any]) -> Fact:
    fact = Fact(**_decode(record, _FACT_SPEC, _FACT_REQUIRED))
    _refuse_secret(fact.content, "content")
    _refuse_secret(fact.evidence, "evidence")
    return fact


def _decode_entity(record: dict[str, Any]) -> Entity:
    values = _decode(record, _ENTITY_SPEC, ("id", "name", "entity_type", "scope"))
    return Entity(type=values.pop("entity_type"), **values)


@dataclass(frozen=True)
class _Edge:
    type: str
    src: str
    dst: str
    props: dict[str, Any]
    created_at: datetime | None = None

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes two edges the same edge: ABOUT and RELATES also differ by role / predicate."""
        if self.type == "ABOUT":
            return (self.type, self.src, self.dst, self.props.get("role"))
        if self.type == "RELATES":
            return (self.type, self.src, self.dst, self.props.get("predicate"), self.props.get("fact_id"))
        return (self.type, self.src, self.dst)


def _decode_edge(record: dict[str, Any]) -> _Edge:
    spec: dict[str, Convert] = {"edge": _text, "from": _text, "to": _text, "props": lambda v, f: v}
    fields = _decode(record, spec, ("edge", "from", "to"))
    edge = fields["edge"]
    allowed = EDGE_PROPS.get(edge)
    if allowed is None:
        raise _Bad(f"edge {edge!r:.60} is not known: use one of {', '.join(EDGE_PROPS)}")
    src = _id("e" if edge == "RELATES" else "f")(fields["from"], "from")
    dst = fields["to"] if edge == "HAS_TAG" else _id("f" if edge in FACT_EDGES else "e")(fields["to"], "to")
    raw = fields.get("props", {})
    if not isinstance(raw, dict):
        raise _Bad("props must be an object")
    props: dict[str, Any] = {}
    for name, value in raw.items():
        if name == "created_at" and edge in _TIMED_EDGES:
            continue
        if name not in allowed:
            raise _Bad(f"{edge} edges carry no property {name!r:.60}")
        if value is not None:
            props[name] = (_number if allowed[name] is float else _text)(value, f"props.{name}")
    if edge == "ABOUT" and props.get("role") not in _ROLES:
        raise _Bad(f"ABOUT edges need props.role, one of {', '.join(_ROLES)}")
    if edge == "RELATES" and "predicate" not in props:
        raise _Bad("RELATES edges need props.predicate")
    return _Edge(edge, src, dst, props, _time(raw.get("created_at"), "props.created_at"))


def _check_header(record: Any, our_schema: int) -> None:
    if not isinstance(record, dict) or record.get("type") != FORMAT:
        mcp_like = isinstance(record, dict) and bool({"entityType", "relationType", "entities"} & set(record))
        hint = (
            " (it looks like an MCP memory server file: import it with --format mcp-memory)"
            if mcp_like
            else ""
        )
        raise _Bad(f'not a hippograph export: the first line must be {{"type": "hippograph", ...}}{hint}')
    if record.get("version") != FORMAT_VERSION:
        raise _Bad(f"format version {record.get('version')!r:.20} is not {FORMAT_VERSION}")
    schema = record.get("schema_version")
    if isinstance(schema, int) and schema > our_schema:
        raise _Bad(
            f"written by a newer hippograph (schema {schema} > {our_schema}): upgrade hippograph first"
        )


# ================================================================== hippograph import


def import_hippograph(memory: Memory, lines: Iterable[str], progress: Progress | None = None) -> ImportReport:
    """Restore a hippograph export exactly; what the store already has (same id, same edge) is skipped.

    ``progress`` is called after each batch with the number of records handled so far.
    """
    problems = _Problems()
    entities: list[Entity] = []
    facts: list[Fact] = []
    edges: list[tuple[str, _Edge]] = []
    defined: dict[str, str] = {}  # id -> where the file defines it
    records = _json_lines(lines, problems)
    first = next(records, None)
    try:
        _check_header(first[1] if first else None, memory.graph.schema_version())
    except _Bad as err:
        problems.add(first[0] if first else "line 1", str(err))
        problems.raise_if_any("hippograph export")  # the rest would be noise
    for where, record in records:
        try:
            kind = record.get("type") if isinstance(record, dict) else None
            if kind == "edge":
                edges.append((where, _decode_edge(record)))
            elif kind == "entity":
                entities.append(_define(defined, _decode_entity(record), where))
            elif kind == "fact":
                facts.append(_define(defined, _decode_fact(record), where))
            else:
                raise _Bad(f"type {kind!r:.60} is not known: each line is an entity, fact or edge object")
        except _Bad as err:
            problems.add(where, str(err))
    problems.raise_if_any("hippograph export")

    with memory._write_lock:  # nothing else writes between the existence checks and the writes
        graph = memory.graph
        stored = graph.fact_ids() | {e.id for e in graph.all_entities()}
        for where, edge in edges:
            for end in (edge.src,) if edge.type == "HAS_TAG" else (edge.src, edge.dst):
                if end not in defined and end not in stored:
                    problems.add(
                        where, f"{edge.type} edge names {end}, which is neither in the file nor stored"
                    )
        problems.raise_if_any("hippograph export")

        new_entities = [e for e in entities if e.id not in stored]
        new_facts = [f for f in facts if f.id not in stored]
        # A multiset, not a set: a store may hold the same edge twice, and a round trip keeps both.
        existing = Counter(_Edge(e.type, e.src, e.dst, dict(e.props)).key for e in graph.all_edges())
        new_edges: list[_Edge] = []
        for _, edge in edges:
            if existing[edge.key] > 0:
                existing[edge.key] -= 1
            else:
                new_edges.append(edge)

        now = memory.clock()
        done = _write_batches(memory, new_entities, graph.insert_entities, progress, 0)
        done = _write_batches(memory, new_facts, graph.insert_facts, progress, done)
        _write_batches(memory, new_edges, lambda batch: _create_edges(memory, batch, now), progress, done)
        # Committed: only now may the in-memory index and the vector index see the new rows.
        for entity in new_entities:
            memory.entities.put(entity)
        for session in {f.session_id for f in new_facts if f.session_id}:
            memory._session_tail.pop(session, None)  # the cached tail may predate the imported facts
        memory.reconcile()
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
        raise _Bad(f"id {node.id} is already defined on {defined[node.id]}")
    defined[node.id] = where
    return node


def _create_edges(memory: Memory, edges: Sequence[_Edge], now: datetime) -> None:
    graph = memory.graph
    graph.link_about_many([(e.src, e.dst, e.props["role"]) for e in edges if e.type == "ABOUT"])
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
            if e.type == "RELATES"
        ]
    )
    graph.tag_facts([(e.src, e.dst) for e in edges if e.type == "HAS_TAG"])
    for edge_type in FACT_EDGES:
        # These CREATE; the caller has already dropped edges the store holds.
        links = [(e.src, e.dst, e.created_at or now, e.props) for e in edges if e.type == edge_type]
        graph.link_facts_many(edge_type, links)


def _write_batches(
    memory: Memory,
    items: Sequence[T],
    write: Callable[[Sequence[T]], object],
    progress: Progress | None,
    done: int,
) -> int:
    """``write`` the items a batch at a time, one graph transaction each; report progress after each."""
    for start in range(0, len(items), BATCH):
        batch = items[start : start + BATCH]
        with memory.graph.transaction():
            write(batch)
        done += len(batch)
        if progress is not None:
            progress(done)
    return done


# ================================================================== MCP memory server import


@dataclass
class _McpEntity:
    name: str
    type: str
    observations: list[str]


def import_mcp_memory(
    memory: Memory, lines: Iterable[str], progress: Progress | None = None, scope: str = "global"
) -> ImportReport:
    """Import the reference MCP memory server's memory.jsonl (or its older single-object JSON).

    Each entity becomes an entity (one the store already knows by name is reused), each
    observation a fact about it, each relation a RELATES edge. Ids are derived from the
    content, so importing the same file twice adds nothing the second time.
    """
    scope = check.scope(scope)
    named, relations, records = _read_mcp(list(lines), memory.settings.max_content_bytes)
    with memory._write_lock:
        graph, now = memory.graph, memory.clock()
        resolved, created = _resolve_mcp_entities(memory, named, scope, now)
        planned = [
            (key, obs, _mcp_id("f", scope, key, obs)) for key, e in named.items() for obs in e.observations
        ]
        stored_facts = graph.fact_ids()
        created_ids = {e.id for e in created}
        # Observations often name other entities ("Works at Acme Corp"): link them as mentions,
        # as remember does, including entities this same file introduces.
        introduced = EntityIndex(created)
        new_facts: list[Fact] = []
        links: dict[str, list[tuple[str, str]]] = {}  # fact id -> (entity id, role)
        gained: Counter[str] = Counter()  # known entity id -> new facts about it
        for key, content, fact_id in planned:
            if fact_id in stored_facts:
                continue
            subject = resolved[key]
            new_facts.append(_mcp_fact(fact_id, content, subject, scope, now, memory.policy))
            found = (*memory.entities.mentions(content, scope), *introduced.mentions(content, scope))
            mentioned = sorted({e.id for e in found} - {subject.id})
            links[fact_id] = [(subject.id, "subject")] + [(eid, "mention") for eid in mentioned]
            if subject.id not in created_ids:
                gained[subject.id] += 1
        stored_relations = graph.read.entity_relations([e.id for e in resolved.values()])
        seen = {(e.src, e.dst, e.props["predicate"]) for e in stored_relations}
        new_relations: list[tuple[str, str, str]] = []
        for src, dst, predicate in relations:
            triple = (resolved[name_key(src)].id, resolved[name_key(dst)].id, predicate)
            if triple not in seen:
                seen.add(triple)
                new_relations.append(triple)

        def write_facts(facts: Sequence[Fact]) -> None:
            graph.insert_facts(facts)
            graph.link_about_many([(f.id, eid, role) for f in facts for eid, role in links[f.id]])
            # A known entity is mentioned again by each fact about it.
            again = Counter(eid for f in facts for eid, role in links[f.id] if role == "subject")
            graph.touch_entities({eid: (n, now) for eid, n in again.items() if eid not in created_ids})

        def write_relations(triples: Sequence[tuple[str, str, str]]) -> None:
            graph.link_entities_many([Relation(*triple, 1.0, None, now) for triple in triples])

        done = _write_batches(memory, created, graph.insert_entities, progress, 0)
        done = _write_batches(memory, new_facts, write_facts, progress, done)
        _write_batches(memory, new_relations, write_relations, progress, done)
        for entity in created:
            memory.entities.put(entity)
        for entity in resolved.values():
            if gained[entity.id]:
                count = entity.mention_count + gained[entity.id]
                memory.entities.put(dataclasses.replace(entity, mention_count=count, last_mentioned=now))
        memory.reconcile()
    skipped = len(named) - len(created) + len(planned) - len(new_facts) + len(relations) - len(new_relations)
    return ImportReport(
        records=records,
        entities_added=len(created),
        facts_added=len(new_facts),
        edges_added=sum(map(len, links.values())) + len(new_relations),
        skipped_existing=skipped,
    )


def _read_mcp(
    lines: list[str], max_bytes: int
) -> tuple[dict[str, _McpEntity], list[tuple[str, str, str]], int]:
    """Check every record; return entities by name key (file order), relations, and the record count."""
    problems = _Problems()
    named: dict[str, _McpEntity] = {}
    relations: list[tuple[str, str, str]] = []
    records = 0
    for where, record in _mcp_records(lines, problems):
        records += 1
        try:
            if not isinstance(record, dict):
                raise _Bad("each record must be a JSON object")
            # Some writers leave out "type"; the other keys say what the record is.
            kind = record.get("type") or ("relation" if "relationType" in record else "entity")
            if kind == "entity":
                name = _name(record.get("name"), "name")
                entity_type = record.get("entityType") or "concept"
                raw = record.get("observations", [])
                if not isinstance(entity_type, str) or not isinstance(raw, list):
                    raise _Bad("entityType must be a string and observations a list of strings")
                entry = named.setdefault(name_key(name), _McpEntity(name, entity_type.strip().lower(), []))
                for i, text in enumerate(raw):
                    content = check.text(text, f"observations[{i}]", max_bytes=max_bytes)
                    _refuse_secret(content, f"observations[{i}]")
                    if content not in entry.observations:
                        entry.observations.append(content)
            elif kind == "relation":
                src, dst = _name(record.get("from"), "from"), _name(record.get("to"), "to")
                predicate = lc.predicate_key(_text(record.get("relationType"), "relationType"))
                if not predicate:
                    raise _Bad("relationType needs at least one letter or digit")
                relations.append((src, dst, predicate))
            else:
                raise _Bad(f"type {kind!r:.60} is not known: use entity or relation")
        except (_Bad, InvalidInput) as err:
            problems.add(where, str(err))
    problems.raise_if_any("MCP memory file")
    for src, dst, _ in relations:
        for name in (src, dst):  # the reference server allows a relation to a name with no entity
            named.setdefault(name_key(name), _McpEntity(name, "concept", []))
    return named, relations, records


def _resolve_mcp_entities(
    memory: Memory, named: dict[str, _McpEntity], scope: str, now: datetime
) -> tuple[dict[str, Entity], list[Entity]]:
    """The entity each name means in ``scope`` (existing, or new with a derived id), and the new ones."""
    known = {key: memory.entities.resolve(key, scope) for key in named}
    candidates = {key: _mcp_id("e", scope, key) for key, found in known.items() if found is None}
    stored = memory.graph.entities(list(candidates.values()))  # belt and braces: the index mirrors it
    resolved: dict[str, Entity] = {}
    created: list[Entity] = []
    for key, entry in named.items():
        found = known[key] or stored.get(candidates[key])
        if found is None:
            found = Entity(
                id=candidates[key],
                name=entry.name,
                type=entry.type or "concept",
                scope=scope,
                mention_count=len(entry.observations),
                first_seen=now,
                last_mentioned=now,
            )
            created.append(found)
        resolved[key] = found
    return resolved, created


def _mcp_fact(
    fact_id: str, content: str, subject: Entity, scope: str, now: datetime, policy: lc.LifecyclePolicy
) -> Fact:
    fact = Fact(
        id=fact_id,
        content=content,
        kind=FactKind.FACT,
        status=FactStatus.STAGED,
        confidence=0.8,  # what remember gives a fact the user did not state
        source=Source.IMPORT,
        provenance=Provenance.EXTRACTED,
        scope=scope,
        created_at=now,
        valid_from=now,
        subject=subject.name,
    )
    return lc.admit(fact, now, policy)


def _mcp_records(lines: list[str], problems: _Problems) -> Iterator[tuple[str, Any]]:
    """Records of memory.jsonl, or of the older format: one JSON object holding two lists."""
    first = next((line for line in lines if line.strip()), "")
    if first.strip() and not _parses(first):
        try:  # not one record per line: perhaps the older format, pretty-printed
            whole = json.loads("\n".join(lines))
        except json.JSONDecodeError:
            whole = None
        if _is_graph_object(whole):
            yield from _graph_object_records(whole)
            return
    for where, record in _json_lines(lines, problems):
        yield from _graph_object_records(record) if _is_graph_object(record) else [(where, record)]


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def _is_graph_object(value: Any) -> bool:
    return isinstance(value, dict) and "type" not in value and ("entities" in value or "relations" in value)


def _graph_object_records(graph: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for field, kind in (("entities", "entity"), ("relations", "relation")):
        items = graph.get(field) or []
        for i, item in enumerate(items if isinstance(items, list) else [items]):
            yield f"{field}[{i}]", ({"type": kind, **item} if isinstance(item, dict) else item)


def _mcp_id(prefix: str, scope: str, key: str, content: str | None = None) -> str:
    # Derived from what the record says, so a re-import finds what the last one wrote. The scope
    # is part of it, so one file imported into two scopes gives two sets of rows, not a clash.
    parts = ["mcp-memory", scope, key] + ([content] if content is not None else [])
    return f"{prefix}_{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()[:16]}"
