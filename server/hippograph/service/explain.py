"""Explain: where one fact came from and how it stands now, with every term of its relevance."""

from __future__ import annotations

from datetime import datetime

from hippograph.domain import bitemporal
from hippograph.domain import lifecycle as lc
from hippograph.domain.models import EdgeOut, EdgeType, EntityLink, ExplainOut, LinkedFact, RelevanceOut
from hippograph.domain.visibility import visible_scopes
from hippograph.service.shaping import fact_out, iso
from hippograph.service.stores import Stores


class Explainer:
    """explain over the shared stores."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def explain(self, fact_id: str, scope: str | None = None) -> ExplainOut:
        """Provenance, chains both ways, contradictions, entities, edges and relevance of one fact
        that ``scope`` sees."""
        fact = self.stores.fact(fact_id, scope)
        now = self.stores.clock()
        # What the fact's own scope sees: no id or edge of another scope is shown beside it.
        view = self.stores.graph.view(visible_scopes(fact.scope))
        older = self.stores.graph.chain(fact.id, EdgeType.SUPERSEDES, newer=False)
        newer = self.stores.graph.chain(fact.id, EdgeType.SUPERSEDES, newer=True)
        edges = view.fact_edges([fact.id])
        contradicting = sorted(
            {e.dst if e.src == fact.id else e.src for e in edges if e.type == EdgeType.CONTRADICTS}
        )
        seen = view.statuses([fid for fid, _ in older + newer] + contradicting)
        related = self.stores.graph.get_facts(list(seen))
        about = view.about_edges([fact.id])
        entities = self.stores.graph.entities([e.dst for e in about])
        rel = lc.relevance(fact, now, self.stores.policy)

        def linked(fid: str, hops: int | None = None) -> LinkedFact:
            other = related[fid]
            return LinkedFact(id=fid, content=other.content, status=other.status.value, hops=hops)

        return ExplainOut(
            fact=fact_out(fact, [entities[e.dst].name for e in about if e.dst in entities]),
            provenance=fact.provenance.value,
            sources=[source.value for source in fact.sources or (fact.source,)],
            last_stated=iso(fact.last_stated),
            evidence=fact.evidence,
            status_reason=fact.status_reason,
            pinned=fact.pinned,
            ttl_policy=fact.ttl_policy.value,
            access_count=fact.access_count,
            last_accessed=iso(fact.last_accessed),
            valid_from=iso(fact.valid_from) or "",
            believed_until=iso(bitemporal.believed_until(fact)),
            relevance=RelevanceOut(
                value=round(rel.value, 6),
                confidence=rel.confidence,
                source_weight=rel.source_weight,
                decay=round(rel.decay, 6),
                status_weight=lc.status_weight(fact.status, self.stores.policy),
            ),
            supersedes=[linked(fid, hops) for fid, hops in older if fid in related],
            superseded_by=[linked(fid, hops) for fid, hops in newer if fid in related],
            contradicts=[linked(fid) for fid in contradicting if fid in related],
            entities=[
                EntityLink(
                    id=e.dst, name=entities[e.dst].name, type=entities[e.dst].type, role=e.props["role"]
                )
                for e in about
                if e.dst in entities
            ],
            edges=[
                EdgeOut(
                    type=e.type,
                    direction="out" if e.src == fact.id else "in",
                    other_id=e.dst if e.src == fact.id else e.src,
                    props={k: (iso(v) if isinstance(v, datetime) else v) for k, v in e.props.items()},
                )
                for e in edges
            ],
        )
