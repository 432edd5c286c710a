"""Import of the reference MCP memory server's memory.jsonl: entities with observations, and relations.

An observation is written about its entity with no name in it ("Lives in Lisbon" under Alice),
and a relation is only an edge between two entities; search ranks text, so each becomes a fact
that reads on its own: "Alice: Lives in Lisbon", "Alice works at Acme" (see ``_observed`` and
``_related``), linked to the entities it is about.

Ids are derived from the record, so importing the same file again adds nothing. The whole
input is read and checked before anything is written.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput
from hippograph.domain.models import Entity, Fact, FactKind, FactStatus, Provenance, Source, name_key
from hippograph.service.records import (
    Bad,
    Problems,
    json_lines,
    read_name,
    read_text,
)
from hippograph.service.stores import Stores
from hippograph.service.transfer import ImportReport, Progress, write_batches
from hippograph.service.upkeep import Upkeep
from hippograph.store.entity_index import HeldEntities
from hippograph.store.seam import EVERYWHERE, Relation


@dataclass
class _McpEntity:
    name: str
    type: str
    observations: list[str]


@dataclass(frozen=True)
class _Planned:
    """A fact an import would write: its text, its subject, and the entities (by name key) it is about."""

    content: str
    subject: Entity
    about: tuple[tuple[str, str], ...]  # (name key, role)
    predicate: str | None = None
    object: str | None = None


def import_mcp_memory(
    stores: Stores,
    upkeep: Upkeep,
    lines: Iterable[str],
    progress: Progress | None = None,
    scope: str = "global",
) -> ImportReport:
    """Import the reference MCP memory server's memory.jsonl (or its older single-object JSON).

    Each entity becomes an entity (one the store already knows by name is reused), each
    observation a fact about it that names it, each relation a RELATES edge and a fact about
    both ends. Ids are derived from the records, so importing the same file twice adds
    nothing the second time.
    """
    scope = check.scope(scope)
    named, relations, records = _read_mcp(list(lines), stores.settings.max_content_bytes)
    with stores.write_lock:
        graph, now = stores.graph, stores.clock()
        facts_about = Counter(name_key(name) for src, dst, _ in relations for name in (src, dst))
        facts_about.update({key: len(entry.observations) for key, entry in named.items()})
        resolved, created = _resolve_mcp_entities(stores, named, facts_about, scope, now)
        # Fact id -> the fact to write. An observation's id is derived from its raw text, as
        # before facts named their entity, so a file imported by an older version adds nothing.
        planned: dict[str, _Planned] = {}
        for key, entry in named.items():
            for obs in entry.observations:
                planned[_mcp_id("f", scope, key, obs)] = _Planned(
                    _observed(entry.name, obs), resolved[key], about=((key, "subject"),)
                )
        for src, dst, predicate in relations:
            src_key, dst_key = name_key(src), name_key(dst)
            fact_id = _mcp_id("f", scope, "\0".join(("relation", src_key, predicate, dst_key)))
            planned[fact_id] = _Planned(
                _related(src, predicate, dst),
                resolved[src_key],
                predicate=predicate,
                object=dst,
                about=((src_key, "subject"), (dst_key, "object")),
            )
        stored_facts = graph.fact_ids()
        created_ids = {e.id for e in created}
        # Observations often name other entities ("Works at Acme Corp"): link them as mentions,
        # as remember does, including entities this same file introduces.
        introduced = HeldEntities(created)
        new_facts: list[Fact] = []
        links: dict[str, list[tuple[str, str]]] = {}  # fact id -> (entity id, role)
        for fact_id, plan in planned.items():
            if fact_id in stored_facts:
                continue
            new_facts.append(_mcp_fact(fact_id, plan, scope, now, stores.policy))
            about: dict[str, str] = {}  # entity id -> role (a relation of an entity to itself: one)
            for key, role in plan.about:
                about.setdefault(resolved[key].id, role)
            links[fact_id] = list(about.items())
            content = plan.content
            found = (*stores.entities.mentions(content, scope), *introduced.mentions(content, scope))
            mentioned = sorted({e.id for e in found} - {eid for eid, _ in links[fact_id]})
            links[fact_id] += [(eid, "mention") for eid in mentioned]
        stored_relations = graph.view(EVERYWHERE).entity_relations([e.id for e in resolved.values()])
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
            again = Counter(eid for f in facts for eid, role in links[f.id] if role != "mention")
            graph.touch_entities({eid: (n, now) for eid, n in again.items() if eid not in created_ids})

        def write_relations(triples: Sequence[tuple[str, str, str]]) -> None:
            graph.link_entities_many([Relation(*triple, 1.0, None, now) for triple in triples])

        done = write_batches(stores, created, graph.insert_entities, progress, 0)
        done = write_batches(stores, new_facts, write_facts, progress, done)
        write_batches(stores, new_relations, write_relations, progress, done)
        upkeep.reconcile()
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
    problems = Problems()
    named: dict[str, _McpEntity] = {}
    relations: list[tuple[str, str, str]] = []
    records = 0
    for where, record in _mcp_records(lines, problems):
        records += 1
        try:
            if not isinstance(record, dict):
                raise Bad("each record must be a JSON object")
            # Some writers leave out "type"; the other keys say what the record is.
            kind = record.get("type") or ("relation" if "relationType" in record else "entity")
            if kind == "entity":
                name = read_name(record.get("name"), "name")
                entity_type = record.get("entityType") or "concept"
                raw = record.get("observations", [])
                if not isinstance(entity_type, str) or not isinstance(raw, list):
                    raise Bad("entityType must be a string and observations a list of strings")
                entry = named.setdefault(name_key(name), _McpEntity(name, entity_type.strip().lower(), []))
                for i, text in enumerate(raw):
                    content = check.text(text, f"observations[{i}]", max_bytes=max_bytes, statement=True)
                    check.text(
                        _observed(entry.name, content),
                        f"observations[{i}]",
                        max_bytes=max_bytes,
                        statement=True,
                    )
                    if content not in entry.observations:
                        entry.observations.append(content)
            elif kind == "relation":
                src, dst = read_name(record.get("from"), "from"), read_name(record.get("to"), "to")
                predicate = lc.predicate_key(read_text(record.get("relationType"), "relationType"))
                if not predicate:
                    raise Bad("relationType needs at least one letter or digit")
                check.text(_related(src, predicate, dst), "relation", max_bytes=max_bytes)
                relations.append((src, dst, predicate))
            else:
                raise Bad(f"type {kind!r:.60} is not known: use entity or relation")
        except (Bad, InvalidInput) as err:
            problems.add(where, str(err))
    problems.raise_if_any("MCP memory file")
    for src, dst, _ in relations:
        for name in (src, dst):  # the reference server allows a relation to a name with no entity
            named.setdefault(name_key(name), _McpEntity(name, "concept", []))
    return named, relations, records


def _resolve_mcp_entities(
    stores: Stores, named: dict[str, _McpEntity], facts_about: Counter[str], scope: str, now: datetime
) -> tuple[dict[str, Entity], list[Entity]]:
    """The entity each name means in ``scope`` (existing, or new with a derived id), and the new ones."""
    known = {key: stores.entities.resolve(key, scope) for key in named}
    candidates = {key: _mcp_id("e", scope, key) for key, found in known.items() if found is None}
    stored = stores.graph.entities(list(candidates.values()))  # belt and braces: the index mirrors it
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
                mention_count=facts_about[key],
                first_seen=now,
                last_mentioned=now,
            )
            created.append(found)
        resolved[key] = found
    return resolved, created


def _observed(name: str, observation: str) -> str:
    """An observation as a fact that names its entity: "Alice: Lives in Lisbon" (as it was, when it
    already begins with the name: "Alice likes tea")."""
    if observation.casefold().startswith(name.casefold()):
        return observation
    return f"{name}: {observation}"


def _related(src: str, predicate: str, dst: str) -> str:
    """A relation as a sentence: ("Alice", "works_at", "Acme") -> "Alice works at Acme"."""
    return f"{src} {predicate.replace('_', ' ')} {dst}"


def _mcp_fact(fact_id: str, plan: _Planned, scope: str, now: datetime, policy: lc.LifecyclePolicy) -> Fact:
    fact = Fact(
        id=fact_id,
        content=plan.content,
        kind=FactKind.FACT,
        status=FactStatus.STAGED,
        confidence=0.8,  # what remember gives a fact the user did not state
        source=Source.IMPORT,
        provenance=Provenance.EXTRACTED,
        scope=scope,
        created_at=now,
        valid_from=now,
        subject=plan.subject.name,
        predicate=plan.predicate,
        object=plan.object,
    )
    return lc.admit(fact, now, policy)


def _mcp_records(lines: list[str], problems: Problems) -> Iterator[tuple[str, Any]]:
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
    for where, record in json_lines(lines, problems):
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
