"""Curation: what a user says about stored facts: confirm, forget, link."""

from __future__ import annotations

from hippograph.domain import lifecycle as lc
from hippograph.domain import validation as check
from hippograph.domain.errors import InvalidInput, InvalidTransition
from hippograph.domain.models import EdgeType, Fact, FactKind, FactOut, FactStatus, LinkOut
from hippograph.domain.visibility import link_refusal
from hippograph.service.consolidation import leave_topics
from hippograph.service.shaping import fact_out
from hippograph.service.stores import Stores
from hippograph.store.seam import EVERYWHERE, fact_row

# Set (to the fact's id) in the transaction that purges a fact, cleared once no file holds its
# text: an open that finds it set finishes the erasure (the process died in between).
PURGE_PENDING = "purge_pending"

# link(relation=...) between two facts -> the stored edge type.
FACT_RELATIONS = {
    "relates_to": EdgeType.RELATES_TO,
    "causes": EdgeType.CAUSES,
    "derived_from": EdgeType.DERIVED_FROM,
    "contradicts": EdgeType.CONTRADICTS,
    "supersedes": EdgeType.SUPERSEDES,
}


class Curator:
    """confirm, forget and link over the shared stores."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def confirm(self, fact_id: str, scope: str | None = None) -> FactOut:
        """Pin a fact the user confirmed: status confirmed, confidence 1, never decays."""
        with self.stores.write_lock:
            fact = self.stores.fact(fact_id, scope)
            current = self.stores.current_version(fact) if fact.status is FactStatus.SUPERSEDED else None
            confirmed = lc.confirm(fact, self.stores.clock(), current_id=current)
            if confirmed != fact:
                self.stores.graph.update_fact_state(confirmed)
                self.stores.vectors.set_status([fact.id], confirmed.status.value)
        return fact_out(confirmed, self.stores.entity_names(fact.id))

    def forget(
        self, fact_id: str, reason: str | None = None, purge: bool = False, scope: str | None = None
    ) -> FactOut:
        """Retract a fact: gone from results, kept as history with the reason. With ``purge``,
        erase it: no file of the data dir keeps its text (the reason is not kept either)."""
        if not isinstance(purge, bool):  # "yes", "false" or 1 must never erase by accident
            raise InvalidInput(
                f"purge must be true or false (a JSON boolean), got {check.shown(purge)}: send true to "
                "erase the fact for good, false (or leave it out) to retract it"
            )
        why = check.optional_text(reason, "reason", max_bytes=500) or "forgotten on request"
        with self.stores.write_lock:
            fact = self.stores.fact(fact_id, scope)
            if purge:
                erased = fact_out(self._purge(fact), [])
                return erased.model_copy(update={"note": self.stores.graph.purge_leaves})
            retracted = lc.retract(fact, self.stores.clock(), why)
            if retracted != fact:
                self.stores.graph.update_fact_state(retracted)
                self.stores.vectors.set_status([fact.id], retracted.status.value)
                leave_topics(self.stores, [fact.id])
        out = fact_out(retracted, self.stores.entity_names(fact.id))
        if retracted != fact:
            return out
        gone = "erased" if fact.status is FactStatus.PURGED else "forgotten"
        return out.model_copy(update={"note": f"already {gone}: nothing changed"})

    def _purge(self, fact: Fact) -> Fact:
        """Make ``fact`` a tombstone and erase its text from the graph, the index and the logs.

        The graph commits first (with ``PURGE_PENDING``); then the index rows go, the turn after
        it in its session is indexed without it, and both stores are rewritten so that no free
        page or old version keeps the text (``finish_purge``). A crash in between is finished
        at the next open.
        """
        s, g = self.stores, self.stores.graph
        tomb = lc.purge(fact, s.clock())
        after = [e.dst for e in g.view(EVERYWHERE).fact_edges([fact.id], [EdgeType.NEXT]) if e.src == fact.id]
        with g.transaction():
            entities = g.purge_facts([tomb], fact.tags)
            orphans = sorted(set(g.orphan_entities(gone=[tomb.id])) & entities)
            g.delete_entities(orphans)
            g.set_meta(PURGE_PENDING, tomb.id)
            g.receipts.drop_all()  # replies of recent writes may quote the fact
        if fact.session_id is not None:
            s.sessions.forget(fact.scope, fact.session_id)
        s.vectors.delete("facts", [fact.id])
        s.vectors.delete("entities", orphans)
        # A conversation turn is indexed with the one before it: the next turn loses this text.
        turns = [t for t in g.get_facts(after).values() if t.kind is FactKind.EPISODE]
        if turns:
            s.vectors.delete("facts", [t.id for t in turns])
            about = {t.id: [e.dst for e in g.view(EVERYWHERE).about_edges([t.id])] for t in turns}
            s.vectors.add(
                "facts",
                [fact_row(t, about[t.id], t.content) for t in turns],
                s.embedder.embed([t.content for t in turns]),
            )
        finish_purge(s)
        return tomb

    def link(
        self, from_id: str, to_id: str, relation: str, weight: float | None = None, scope: str | None = None
    ) -> LinkOut:
        """Add a typed edge between two facts, two entities, or a fact and an entity (idempotent).

        Both ends must be seen from ``scope`` (else: not found, as an unknown id), and the link
        must keep within one scope (``visibility.link_refusal``)."""
        src = check.node_id(from_id, "from_id")
        dst = check.node_id(to_id, "to_id")
        if src == dst:
            raise InvalidInput("from_id and to_id are the same: link two different facts or entities")
        rel = check.text(relation, "relation", max_bytes=64).lower().replace(" ", "_")
        w = check.confidence(weight, default=1.0, field="weight", ends="0 (weak) to 1 (strong; the default)")
        with self.stores.write_lock:
            now = self.stores.clock()
            kinds = (src[0], dst[0])
            if kinds == ("f", "f"):
                edge = FACT_RELATIONS.get(rel)
                if edge is None:
                    allowed = ", ".join(FACT_RELATIONS)
                    raise InvalidInput(
                        f"relation {check.shown(relation)} cannot join two facts: use one of {allowed}"
                    )
                a, b = self.stores.fact(src, scope), self.stores.fact(dst, scope)
                _refuse_across_scopes((a.id, a.scope), (b.id, b.scope))
                for erased in (f for f in (a, b) if f.status is FactStatus.PURGED):
                    raise InvalidTransition(f"fact {erased.id} was purged: there is nothing left to link")
                if self.stores.graph.has_edge(edge, a.id, b.id):
                    return LinkOut(from_id=src, to_id=dst, relation=rel, edge_type=edge, weight=w)
                if edge == EdgeType.SUPERSEDES:
                    older = self.stores.graph.chain(b.id, EdgeType.SUPERSEDES, newer=False)
                    if any(fid == a.id for fid, _ in older):
                        raise InvalidTransition(
                            f"{b.id} already supersedes {a.id} (directly or through a chain): linking "
                            "them the other way would make a cycle; correct the newest fact instead"
                        )
                    old = lc.supersede(b, now, f"superseded by {a.id} (link)")
                    with self.stores.graph.transaction():
                        self.stores.graph.update_fact_state(old)
                        self.stores.graph.link_facts(edge, a.id, b.id, now, reason=old.status_reason)
                    self.stores.vectors.set_status([b.id], old.status.value)
                else:
                    self.stores.graph.link_facts(edge, a.id, b.id, now, weight=w, relation=rel)
                return LinkOut(from_id=src, to_id=dst, relation=rel, edge_type=edge, weight=w)
            if kinds == ("e", "e"):
                ends = [self.stores.entity(eid, scope) for eid in (src, dst)]
                _refuse_across_scopes(*((e.id, e.scope) for e in ends))
                self.stores.graph.link_entities(src, dst, rel, w, None, now)
                return LinkOut(from_id=src, to_id=dst, relation=rel, edge_type=EdgeType.RELATES, weight=w)
            if rel != "about":
                raise InvalidInput(
                    f"relation {check.shown(relation)} cannot join a fact and an entity: send "
                    "'about' (the fact is about the entity), or link two entities with a predicate"
                )
            fact = self.stores.fact(src if kinds[0] == "f" else dst, scope)
            entity_id = dst if kinds[0] == "f" else src
            entity = self.stores.entity(entity_id, scope)
            scope_of = {fact.id: fact.scope, entity.id: entity.scope}
            _refuse_across_scopes((src, scope_of[src]), (dst, scope_of[dst]))
            self.stores.graph.link_about(fact.id, entity_id, "mention")
            linked = sorted({e.dst for e in self.stores.graph.view(EVERYWHERE).about_edges([fact.id])})
            self.stores.vectors.update("facts", [fact.id], {"entity_ids": linked})
            return LinkOut(from_id=src, to_id=dst, relation=rel, edge_type=EdgeType.ABOUT, weight=w)


def _refuse_across_scopes(src: tuple[str, str], dst: tuple[str, str]) -> None:
    """Raise InvalidInput if a link between two (id, scope) nodes would join two scopes."""
    refusal = link_refusal(src, dst)
    if refusal is not None:
        raise InvalidInput(refusal)


def finish_purge(stores: Stores) -> None:
    """Rewrite the index and the graph file so that no deleted text survives on disk, then clear
    ``PURGE_PENDING``. Call it holding the write lock."""
    purged = stores.graph.get_meta(PURGE_PENDING)
    if purged:
        leave_topics(stores, [purged])
    stores.gaps.clear()  # a logged question may quote what was erased
    stores.vectors.erase((), ())
    stores.graph.rebuild()
    stores.graph.set_meta(PURGE_PENDING, "")
