"""A write batch: what storing each fact writes, decided under the write lock (``Planned``), what
the batch's earlier facts did for its later ones to see (``Batch``), and the one graph
transaction that writes it all (``write_graph``), then the vector index (``commit``).
``writes.Writer`` plans batches and commits them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from hippograph.domain.errors import GraphCacheFull
from hippograph.domain.models import EdgeType, Entity, Fact, SimilarFact
from hippograph.service.shaping import entity_row, entity_text
from hippograph.service.stores import Stores
from hippograph.store.entity_index import PendingEntities
from hippograph.store.seam import ClaimKey, GraphStore, Relation, SessionKey, as_stored, claim_key, fact_row


@dataclass(frozen=True)
class Planned:
    """What storing one fact writes, decided under the write lock."""

    fact: Fact
    text: str  # what the vector index holds for it
    linked: list[tuple[str, Entity]]  # (role, entity) it is ABOUT
    created: list[Entity]  # the new ones among them
    previous: str | None  # the fact before it in its session
    superseded: list[Fact]  # in their new state
    contradicted: list[Fact]
    relation: Relation | None  # subject -[predicate]-> object
    similar: list[SimilarFact]  # the nearest other active facts, for the reply
    corroborated: bool = False  # ``fact`` is a stored fact stated again (nothing new is inserted)
    retyped: Mapping[str, str] = field(default_factory=dict)  # known entity id -> the type its text gives


@dataclass
class Batch:
    """What the earlier facts of a write batch did, for the later ones to see before it commits."""

    entities: PendingEntities
    candidates: dict[ClaimKey, list[Fact]]  # stored active facts by key, then the batch's own
    states: dict[str, Fact] = field(default_factory=dict)  # fact id -> its state after the batch
    mentions: dict[str, tuple[int, datetime]] = field(default_factory=dict)  # entity id -> (count, last)
    retyped: dict[str, str] = field(default_factory=dict)  # entity id -> its new type
    # The batch's new facts and their vectors as the index will hold them: the later facts of
    # the batch weigh them as they would weigh stored ones.
    written: list[tuple[Fact, np.ndarray]] = field(default_factory=list)
    # (scope, session) -> its latest (id, content)
    turns: dict[SessionKey, tuple[str, str]] = field(default_factory=dict)

    def active_with(self, key: ClaimKey) -> list[Fact]:
        latest = (self.states.get(f.id, f) for f in self.candidates.get(key, ()))
        return [f for f in latest if f.status.is_active]

    def add(self, planned: Planned, vector: np.ndarray) -> None:
        fact, now = planned.fact, planned.fact.created_at
        if planned.corroborated:
            self.states[fact.id] = fact
            for old in planned.superseded:
                self.states[old.id] = old
            return
        self.written.append((fact, as_stored(vector)))
        if fact.session_id is not None:
            self.turns[fact.scope, fact.session_id] = (fact.id, fact.content)
        for entity in planned.created:
            self.entities.put(entity)
        self.retyped.update(planned.retyped)
        for _, entity in planned.linked:
            if entity not in planned.created:
                self.mentions[entity.id] = (self.mentions.get(entity.id, (0, now))[0] + 1, now)
                mentioned = dataclasses.replace(
                    entity, mention_count=entity.mention_count + 1, last_mentioned=now
                )
                self.entities.put(mentioned)
        for old in planned.superseded:
            self.states[old.id] = old
        key = claim_key(fact.subject, fact.predicate, fact.scope)
        if key is not None:
            self.candidates.setdefault(key, []).append(fact)


def commit(stores: Stores, planned: Sequence[Planned], batch: Batch, vectors: np.ndarray) -> None:
    """Write a planned batch: the graph in one transaction, then the vector index."""
    g = stores.graph
    new = [p for p in planned if not p.corroborated]
    created = [e for p in new for e in p.created]
    # Before the transaction: if the model fails, nothing is written. (Embedding beside the
    # graph's statements, in a thread, made remember slower on two cores: 18 vs 16 ms p50.)
    entity_vectors = stores.embedder.embed([entity_text(e) for e in created]) if created else None
    while True:
        try:
            write_graph(g, planned, batch, created)
            break
        except GraphCacheFull as full:
            # Nothing of it was stored (the transaction rolled back whole); when room was made
            # for it, the same write is sent again: a large write (a claim with thousands of
            # active facts superseded at once) costs time, not an error.
            if not full.room_made:
                raise
    # Committed: from here on the facts survive a crash (reconcile re-indexes them).
    for p in new:
        stores.sessions.committed(p.fact)
    rows = [fact_row(batch.states.get(p.fact.id, p.fact), [e.id for _, e in p.linked], p.text) for p in new]
    stores.vectors.add(
        "facts",
        rows,
        np.asarray([v for p, v in zip(planned, vectors, strict=True) if not p.corroborated]),
    )
    written = {p.fact.id for p in new}
    changed = [f for fid, f in batch.states.items() if fid not in written]
    for status in sorted({f.status.value for f in changed}):
        stores.vectors.set_status([f.id for f in changed if f.status.value == status], status)
    if entity_vectors is not None:
        stores.vectors.add("entities", [entity_row(e) for e in created], entity_vectors)
    for kind in sorted(set(batch.retyped.values())):
        stores.vectors.update("entities", [e for e, t in batch.retyped.items() if t == kind], {"type": kind})


def write_graph(g: GraphStore, planned: Sequence[Planned], batch: Batch, created: Sequence[Entity]) -> None:
    """The batch's graph writes, in one transaction: its new facts and entities, its edges, and
    the new states of the facts it changed."""
    new = [p for p in planned if not p.corroborated]
    with g.transaction():
        g.insert_facts([p.fact for p in new])
        g.insert_entities(created)
        g.touch_entities(batch.mentions)
        g.retype_entities(batch.retyped)
        g.link_about_many([(p.fact.id, e.id, role) for p in new for role, e in p.linked])
        g.link_entities_many([p.relation for p in new if p.relation is not None])
        g.tag_facts([(p.fact.id, tag) for p in new for tag in p.fact.tags])
        g.link_facts_many(
            EdgeType.NEXT, [(p.previous, p.fact.id, p.fact.created_at, {}) for p in new if p.previous]
        )
        g.update_fact_states(list(batch.states.values()))
        g.link_facts_many(
            EdgeType.SUPERSEDES,
            [
                (p.fact.id, old.id, stated_at(p.fact), {"reason": old.status_reason})
                for p in planned
                for old in p.superseded
            ],
        )
        g.link_facts_many(
            EdgeType.CONTRADICTS,
            [(p.fact.id, old.id, stated_at(p.fact), {}) for p in planned for old in p.contradicted],
        )


def stated_at(fact: Fact) -> datetime:
    """When ``fact`` was last stated: now, for a new fact or one just stated again."""
    return fact.last_stated or fact.created_at
