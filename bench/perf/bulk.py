"""Build a large store in minutes: the corpus restored through import, not remembered one by one.

``remember_many`` runs every write rule per fact (similar facts, corroboration, claims, name
typing) and built about 18 facts a second at 100k facts: a million would take most of a day.
Import is the product's other way in (``hippograph import``; ``transfer.restore``): the graph
in batched transactions, then the vector index brought up to date by the start-up repair.

The facts are what ``remember`` would build from the same arguments (``intake.build_item``), with
what its write rules decide reduced to the plain cases: a fact whose text was stored before
corroborates it instead of being stored again, each fact follows the one before it in its
session (NEXT, and an episode is indexed with that turn's text), a named subject and object
are related (RELATES), causes are linked, and a fact that changes a claim's value supersedes
the claim's active facts (or contradicts them) by the product's rule (``domain.conflicts``), in
corpus order. Not done: corroboration of near-duplicates, and entity types come from the corpus,
not from the text. (Until 2026-12-01 supersession was not done either: a claim of the 100k
corpus held hundreds of active facts, and each of the perf bench's remembers that restated it
superseded them all at once, a write no store built by remembers ever makes.)
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from bench.perf.measure import log
from bench.perf.workload import GenFact, entity_types, remember_kwargs

_TYPES = {"project": "organization", "topic": "concept"}  # the corpus's kinds in the product's words


@dataclass(frozen=True)
class Plan:
    """Which facts are stored, and what each one follows."""

    first: list[int]  # corpus index -> index of the fact with its text (itself, unless a restatement)
    previous: list[int | None]  # stored fact's index -> the stored fact before it in its session


def plan(facts: Sequence[GenFact]) -> Plan:
    first: list[int] = []
    previous: list[int | None] = []
    seen: dict[str, int] = {}
    last_in: dict[str, int] = {}
    for i, fact in enumerate(facts):
        first.append(seen.setdefault(fact.content, i))
        previous.append(last_in.get(fact.session_id) if first[i] == i else None)
        if first[i] == i:
            last_in[fact.session_id] = i
    return Plan(first, previous)


def index_texts(facts: Sequence[GenFact]) -> list[str]:
    """What the vector index embeds for each stored fact, in corpus order (for the vector cache)."""
    from hippograph.service.shaping import index_text

    p = plan(facts)
    texts = []
    for i, fact in enumerate(facts):
        if p.first[i] != i:
            continue
        before = p.previous[i]
        context = facts[before].content if fact.kind == "episode" and before is not None else None
        texts.append(index_text(cast(Any, fact), context))
    return texts


def _entity_id(name: str) -> str:
    return "e_" + hashlib.sha256(name.encode()).hexdigest()[:16]


def build_by_import(memory: Any, facts: Sequence[GenFact], times: Sequence[str], seed: int) -> dict[str, Any]:
    """Restore the corpus into ``memory`` through import; returns timings and the hubs' share."""
    from hippograph.domain.models import EdgeType, Entity
    from hippograph.service.intake import build_item
    from hippograph.service.records import Edge
    from hippograph.service.transfer import restore

    started = time.perf_counter()
    stores = memory.stores
    p = plan(facts)
    types = entity_types(seed)
    built: dict[int, Any] = {}
    corroborations: Counter[int] = Counter()
    edges: list[tuple[str, Any]] = []
    mentions: Counter[str] = Counter()
    for i, gen in enumerate(facts):
        if p.first[i] != i:
            corroborations[p.first[i]] += 1
            continue
        fact, names = build_item(stores, i, {"content": gen.content, **remember_kwargs(gen, times[i])})
        built[i] = fact
        where = f"fact {i}"
        for name in dict.fromkeys(names):
            mentions[name] += 1
            role = "subject" if name == gen.subject else "object" if name == gen.object else "mention"
            edges.append((where, Edge(EdgeType.ABOUT, fact.id, _entity_id(name), {"role": role})))
        if gen.subject in names and gen.object in names and fact.predicate:
            props = {"predicate": fact.predicate, "weight": 1.0, "fact_id": fact.id}
            ends = _entity_id(gen.subject), _entity_id(gen.object)
            edges.append((where, Edge(EdgeType.RELATES, *ends, props, fact.created_at)))
        edges += [(where, Edge(EdgeType.HAS_TAG, fact.id, tag, {})) for tag in fact.tags]
        before = p.previous[i]
        if before is not None:
            edges.append((where, Edge(EdgeType.NEXT, built[before].id, fact.id, {}, fact.created_at)))
        if gen.cause is not None and p.first[gen.cause] in built:
            cause = built[p.first[gen.cause]]
            edges.append((where, Edge(EdgeType.CAUSES, cause.id, fact.id, {"weight": 1.0}, fact.created_at)))
    edges += _claims_resolved(built, stores.policy)
    stored = [
        dataclasses.replace(fact, corroborations=fact.corroborations + corroborations[i])
        for i, fact in built.items()
    ]
    now = stores.clock()
    entities = [
        Entity(
            _entity_id(name),
            name,
            _TYPES.get(types.get(name, "topic"), types.get(name, "concept")),
            "global",
            mention_count=count,
            first_seen=now,
            last_mentioned=now,
        )
        for name, count in mentions.items()
    ]
    prepared = time.perf_counter()
    log(f"  import: {len(stored):,} facts, {len(entities):,} entities, {len(edges):,} edges prepared")

    def progress(done: int) -> None:
        if done % 100_000 < 500:
            log(f"  import: {done:,} records written")

    report = restore(stores, memory.upkeep, entities, stored, edges, progress)
    about = Counter(e.dst for _, e in edges if e.type == EdgeType.ABOUT)
    hubs = sum(count for _, count in about.most_common(20))
    return {
        "route": "import",
        "seconds": round(time.perf_counter() - started, 2),
        "prepare_seconds": round(prepared - started, 2),
        "facts_stored": report.facts_added,
        "restatements": sum(corroborations.values()),
        "edges": report.edges_added,
        "top20_about_share": round(hubs / max(1, sum(about.values())), 3),
    }


def _claims_resolved(built: dict[int, Any], policy: Any) -> list[tuple[str, Any]]:
    """Each stored fact, in corpus order, against the active facts of its claim, as remember's
    planner resolves it (``WriteService._resolve_claims``): a superseded fact's new state goes
    into ``built``; returns the SUPERSEDES and CONTRADICTS edges."""
    from hippograph.domain import conflicts
    from hippograph.domain import lifecycle as lc
    from hippograph.domain.models import EdgeType
    from hippograph.service.records import Edge
    from hippograph.service.write_batch import stated_at
    from hippograph.store.graph_values import claim_key

    active: dict[Any, list[int]] = {}
    edges: list[tuple[str, Any]] = []
    for i, fact in built.items():
        key = claim_key(fact.subject, fact.predicate, fact.scope)
        if key is None:
            continue
        kept, at, where = [], stated_at(fact), f"fact {i}"
        for j in active.get(key, []):
            outcome = conflicts.resolve_conflict(fact, built[j], policy)
            if outcome is conflicts.ConflictOutcome.SUPERSEDE:
                reason = f"superseded by {fact.id}"
                built[j] = lc.supersede(built[j], fact.created_at, reason, valid_until=fact.event_time)
                props = {"reason": built[j].status_reason}
                edges.append((where, Edge(EdgeType.SUPERSEDES, fact.id, built[j].id, props, at)))
                continue
            if outcome is conflicts.ConflictOutcome.CONTRADICT:
                edges.append((where, Edge(EdgeType.CONTRADICTS, fact.id, built[j].id, {}, at)))
            kept.append(j)
        active[key] = [*kept, i]
    return edges
