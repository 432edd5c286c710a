"""The subgraph a scope sees around its newest facts: what the explorer draws, read like any search.

A read: it changes nothing memory believes (no status, rank or usage count moves). The scope
rule holds as everywhere: facts of the scopes ``visible_scopes`` names, entities and edges as
``graph.view`` shows them to a caller there, nothing of another scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.models import (
    HISTORY_STATUSES,
    Entity,
    Fact,
    FactKind,
    FactStatus,
    SubgraphEdge,
    SubgraphEntity,
    SubgraphFact,
    SubgraphOut,
)
from hippograph.domain.visibility import visible_scopes
from hippograph.service.shaping import iso
from hippograph.service.stores import Stores
from hippograph.store.seam import EdgeRow, GraphView

DEFAULT_LIMIT = 500
MAX_LIMIT = 5000


class Subgraphs:
    """subgraph over the shared stores."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def subgraph(
        self,
        scope: str | None = None,
        limit: int = DEFAULT_LIMIT,
        kinds: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
    ) -> SubgraphOut:
        count = check.limit(limit, default=DEFAULT_LIMIT, maximum=MAX_LIMIT)
        scopes = visible_scopes(check.scope(scope))
        graph = self.stores.graph
        ids, total = graph.listing.newest(
            scopes,
            check.choices(kinds, FactKind, "kinds", FactKind.FACT) or tuple(k.value for k in FactKind),
            # default: all but purged (a tombstone has nothing to show)
            check.choices(statuses, FactStatus, "statuses", FactStatus.STAGED) or HISTORY_STATUSES,
            limit=count,
        )
        found = graph.get_facts(ids)
        facts = [found[fid] for fid in ids if fid in found]  # newest first
        view = graph.view(scopes)
        about = view.about_edges([f.id for f in facts])
        entities = graph.entities(sorted({edge.dst for edge in about}))
        now = self.stores.clock()
        return SubgraphOut(
            facts=[self._fact(f, now) for f in facts],
            entities=[_entity(e) for e in sorted(entities.values(), key=lambda e: (e.name.casefold(), e.id))],
            edges=_edges(view, {f.id for f in facts}, about, set(entities)),
            facts_total=total,
            limit=count,
        )

    def _fact(self, fact: Fact, now: datetime) -> SubgraphFact:
        relevance = lc.relevance(fact, now, self.stores.policy).value
        return SubgraphFact(
            id=fact.id,
            content=fact.content,
            kind=fact.kind.value,
            status=fact.status.value,
            scope=fact.scope,
            confidence=round(fact.confidence, 4),
            relevance=round(relevance, 4),
            created_at=iso(fact.created_at) or "",
            event_time=iso(fact.event_time),
        )


def _entity(entity: Entity) -> SubgraphEntity:
    return SubgraphEntity(
        id=entity.id,
        name=entity.name,
        type=entity.type,
        scope=entity.scope,
        aliases=list(entity.aliases),
        summary=entity.summary,
        mention_count=entity.mention_count,
    )


def _edges(
    view: GraphView, fact_ids: set[str], about: Sequence[EdgeRow], entity_ids: set[str]
) -> list[SubgraphEdge]:
    """The edges whose two ends are both listed: fact to fact, fact about entity, entity to entity."""
    edges = [
        SubgraphEdge(type=e.type, source=e.src, target=e.dst, label=e.type.lower().replace("_", " "))
        for e in view.fact_edges(sorted(fact_ids))
        if e.src in fact_ids and e.dst in fact_ids
    ]
    edges += [
        SubgraphEdge(type=e.type, source=e.src, target=e.dst, label=str(e.props.get("role", "")))
        for e in about
        if e.dst in entity_ids
    ]
    edges += [
        SubgraphEdge(
            type=e.type, source=e.src, target=e.dst, label=str(e.props.get("predicate") or "related to")
        )
        for e in view.entity_relations(sorted(entity_ids))
        if e.src in entity_ids and e.dst in entity_ids
    ]
    return edges
