"""Which facts answer a query, and why: candidates, graph expansion, fusion, scoring.

1. Channels each rank fact ids: ``vector`` (kNN over fact embeddings), ``fts`` (BM25 over
   fact text, for the query's words without its time phrase), ``entity`` (kNN restricted to
   facts about entities the query names, by alias or by entity-vector match) and, when the
   query names a period, ``window`` (kNN restricted to the facts of that period).
2. ``graph``: spreading activation from the best candidates and the anchor entities,
   breadth-first over typed edges (edge weight x per-hop decay), fan-out bounded per node
   so a hub cannot blow up latency. It finds facts that share no words with the query.
3. Score-aware weighted reciprocal rank fusion over the channels (each hit's 1/(k + rank),
   scaled by its score relative to the channel's best), then the lifecycle's relevance and
   status weight. Every candidate keeps its per-channel ranks, scores and graph path.
If graph expansion fails, the other channels still answer and a note says so.

Every channel sees what the caller may see and nothing else: the index channels filter by
``where`` (scopes, statuses, kinds, tags, entities, time), the walk and the neighbour share
read the graph through ``graph.view(where.scopes)`` (no step into another scope), and every
candidate, whichever channel brought it, passes ``where`` once more before it is returned.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from hippograph.domain import lifecycle as lc
from hippograph.domain.models import ACTIVE_STATUSES, FACT_EDGES, EdgeType, Entity
from hippograph.retrieval import ranking
from hippograph.retrieval.fusion import Candidate, fuse, shared_ranks
from hippograph.retrieval.policy import RetrievalPolicy
from hippograph.retrieval.ranking import Lookback, Ranked
from hippograph.store.entity_index import EntityIndex
from hippograph.store.seam import EdgeRow, Filter, GraphStore, GraphView, Hit, VectorStore, fact_row
from hippograph.text.names import OWNER, about_owner
from hippograph.text.query_intent import Intent, QueryPlan, abbreviation

log = logging.getLogger(__name__)

# How a note that the results may not answer the query begins (review counts those queries).
NO_CONFIDENT_MATCH = "no confident match"
NEAREST = "these are the nearest facts"


@dataclass(frozen=True)
class Activation:
    value: float
    hops: int
    edge: str
    from_id: str
    via_entity: str | None = None


class Retriever:
    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorStore,
        entities: EntityIndex,
        lifecycle: lc.LifecyclePolicy,
        policy: RetrievalPolicy | None = None,
    ) -> None:
        self._graph = graph
        self._vectors = vectors
        self._entities = entities
        self._lifecycle = lifecycle
        self.policy = policy or RetrievalPolicy()

    def close(self) -> None:
        """Nothing to release (kept for callers that close what they open)."""

    def with_policy(self, **overrides: Any) -> None:
        self.policy = replace(self.policy, **overrides)

    # ------------------------------------------------------------ anchors

    def anchors(
        self, query: str, vector: np.ndarray, scopes: Sequence[str]
    ) -> list[tuple[Entity, float, str]]:
        """Entities the query is about: (entity, strength, how found)."""
        found: dict[str, tuple[Entity, float, str]] = {}
        for scope in scopes[:1]:
            for entity in self._entities.mentions(query, scope):
                found[entity.id] = (entity, 1.0, "name")
            # "What do I ...?" asks about the user: the owner entity, if the scope has one.
            owner = self._entities.resolve(OWNER, scope) if about_owner(query) else None
            if owner is not None:
                found.setdefault(owner.id, (owner, 1.0, "name"))
        if self.policy.entity_vector_anchors:
            hits = self._vectors.vector_search(
                "entities", vector, self.policy.entity_vector_anchors, Filter(scopes=scopes)
            )
            for hit in hits:
                matched = self._entities.get(hit.id)
                if matched and hit.score >= self.policy.entity_min_similarity and hit.id not in found:
                    found[hit.id] = (matched, hit.score, "vector")
        return list(found.values())

    # ------------------------------------------------------------ the pipeline

    def search(
        self,
        query: str,
        embed: Callable[[str], np.ndarray],
        where: Filter,
        limit: int,
        plan: QueryPlan,
        *,
        now: datetime,
        lookback: Lookback | None = None,
    ) -> tuple[list[Ranked], list[str]]:
        """The ``limit`` best facts for a query (its vector made by ``embed``), ranked, and notes
        for the caller. The keyword query needs no vector: it is begun first, and runs on
        LanceDB's threads while the query is embedded."""
        keywords = self._vectors.start_text_search("facts", plan.search_text, self._fanned(limit), where)
        vector = embed(query)
        size = ranking.pool_size(limit, lookback=lookback)
        candidates, notes = self.retrieve(query, vector, where, limit, plan, keywords, weighed=size)
        pooled = ranking.pool(candidates, limit, lookback=lookback)
        facts = self._graph.get_facts([c.id for c in pooled])
        ranked = ranking.rank(
            pooled,
            facts,
            limit=limit,
            now=now,
            plan=plan,
            lifecycle=self._lifecycle,
            policy=self.policy,
            lookback=lookback,
        )
        ranked = self._with_relevance(ranked, vector)
        ranked = ranking.without_padding(ranked, where, self.policy.tail_relevance)
        best = max((r.relevance for r in ranked), default=0.0)
        # Names are looked up (up to two keyword queries each) only when nothing is close.
        unknown = [] if best >= self.policy.min_relevance else self._unknown_names(plan, where)
        if unknown:
            notes.append(f"{NO_CONFIDENT_MATCH}: no fact mentions {', '.join(unknown)}")
            return [], notes
        if ranked and best < self.policy.confident_relevance and not ranking.holds_query(query, ranked):
            notes.append(
                f"{NO_CONFIDENT_MATCH} (best relevance {best:.2f}): {NEAREST}; "
                "check that one answers the question before relying on it"
            )
        return ranked, notes

    def _with_relevance(self, ranked: list[Ranked], vector: np.ndarray) -> list[Ranked]:
        """Each result with its cosine similarity to the query (from the vector channel, or the index)."""
        known = {r.fact.id: r.candidate.channels.get("vector", {}).get("score") for r in ranked}
        missing = [fid for fid, sim in known.items() if sim is None]
        known |= self._vectors.similarities("facts", missing, vector) if missing else {}
        return [replace(r, relevance=max(0.0, float(known.get(r.fact.id) or 0.0))) for r in ranked]

    def _unknown_names(self, plan: QueryPlan, where: Filter) -> list[str]:
        """The names the query writes (capitalised spans) that memory has never seen in the
        caller's view: no visible entity or fact mentions them, and no visible scope is named so.
        An abbreviation is no such name: "Who is the TL for payments?" is answered by "... is the
        tech lead for the payments team"."""
        scopes = where.scopes or ()
        visible = Filter(scopes=where.scopes)
        scope_words = {w for scope in scopes for w in re.split(r"[^\w]+|_", scope.casefold()) if w}
        unseen = [
            name
            for name in plan.capitalized
            if not abbreviation(name)
            and not set(re.split(r"[^\w]+|_", name.casefold())) <= scope_words
            and not any(self._entities.mentions(name, scope) for scope in scopes)
        ]
        # Every keyword query begun at once: LanceDB runs them side by side.
        begun = [
            (name, self._vectors.start_text_search(table, name, 1, visible))
            for name in unseen
            for table in ("entities", "facts")
        ]
        found = {name for name, hits in begun if hits()}
        return [name for name in unseen if name not in found]

    def _fanned(self, limit: int) -> int:
        """How many candidates each channel ranks for ``limit`` results."""
        return max(limit * self.policy.fanout, self.policy.min_candidates)

    def retrieve(
        self,
        query: str,
        vector: np.ndarray,
        where: Filter,
        limit: int,
        plan: QueryPlan,
        keywords: Callable[[], list[Hit]],
        *,
        weighed: int | None = None,
    ) -> tuple[list[Candidate], list[str]]:
        """Fused candidates (best first, not yet lifecycle-weighted) and notes for the caller;
        ``keywords`` waits for the keyword channel's hits, begun by the caller; ``weighed``: how
        many of the best the caller weighs (None: all of them)."""
        p = self.policy
        notes: list[str] = []
        k = self._fanned(limit)
        # The queries with a vector one after the other: run side by side in threads they were
        # slower on two cores (graph off, 100k facts: p50 37 ms against 29 ms), as LanceDB has
        # threads of its own.
        view = self._graph.view(where.scopes).keeping_about()
        anchors = self.anchors(query, vector, where.scopes or ()) if p.entity_channel or p.graph else []
        by_entity = p.entity_channel and bool(anchors)
        pooled = by_entity and p.entity_pool > 0
        by_vector = self._vectors.vector_search("facts", vector, k * p.entity_pool if pooled else k, where)
        by_text = keywords()
        ranked: dict[str, list[Hit]] = {"vector": by_vector[:k], "fts": by_text}
        window = _within_period(where, plan)
        if window is not None:
            ranked["window"] = self._vectors.vector_search("facts", vector, k, window)
        if pooled:
            ranked["entity"] = self._about_anchors(view, by_vector, anchors)[:k]
        elif by_entity:
            restricted = replace(where, entity_ids_any=[e.id for e, _, _ in anchors])
            ranked["entity"] = self._vectors.vector_search("facts", vector, k, restricted)
        weights = dict(p.channel_weights)
        for channel, boost in p.intent_channel_boost.get(plan.intent, {}).items():
            weights[channel] = weights.get(channel, 1.0) * boost
        fused = fuse(ranked, weights, p.rrf_k, p.score_power)
        if "entity" in ranked:
            names = ", ".join(e.name for e, _, _ in anchors)
            for hit in ranked["entity"]:
                fused[hit.id].channels["entity"]["via"] = names

        judged: dict[str, bool] = {}  # fact id -> whether the caller may see it (_visible)
        if p.graph:
            try:
                self._expand_into(view, fused, anchors, where, plan, weights, judged)
            except Exception as err:  # the graph is an enhancement: never fail the caller for it
                log.exception("graph expansion failed")
                notes.append(f"graph expansion failed ({type(err).__name__}); results are from search alone")
        if p.next_share or p.prev_share:
            self._share_with_neighbours(view, fused, where, judged)
        shown = self._visible(view, list(fused), where, judged)
        kept = [c for c in fused.values() if c.id in shown]
        if p.anchor_bonus:
            self._favour_anchored(view, kept, anchors, weighed)
        return sorted(kept, key=lambda c: (-c.fused, c.id)), notes

    def _favour_anchored(
        self,
        view: GraphView,
        candidates: Sequence[Candidate],
        anchors: Sequence[tuple[Entity, float, str]],
        weighed: int | None,
    ) -> None:
        """Raise the candidates centred on an entity the query names. Of more than ``weighed``,
        only those the raise could bring among the best ``weighed`` are looked at: the rest stay out
        of them either way (at 5k facts a search reached ~300 facts and read every one's
        entities for this)."""
        named = {entity.id for entity, _, how in anchors if how == "name"}
        if not named:
            return
        raise_by = 1 + self.policy.anchor_bonus
        if weighed is not None and len(candidates) > weighed:
            cutoff = sorted((c.fused for c in candidates), reverse=True)[weighed - 1]
            candidates = [c for c in candidates if c.fused * raise_by >= cutoff]
        by_id = {c.id: c for c in candidates}
        for fid in view.centred_on_any(list(by_id), named):
            by_id[fid].fused *= raise_by

    def _about_anchors(
        self, view: GraphView, hits: Sequence[Hit], anchors: Sequence[tuple[Entity, float, str]]
    ) -> list[Hit]:
        """The hits about any of the anchors, in order, ranked afresh."""
        about = view.about_any([h.id for h in hits], [entity.id for entity, _, _ in anchors])
        return [replace(hit, rank=rank) for rank, hit in enumerate((h for h in hits if h.id in about), 1)]

    def _share_with_neighbours(
        self, view: GraphView, fused: dict[str, Candidate], where: Filter, judged: dict[str, bool]
    ) -> None:
        p = self.policy
        top = sorted(fused.values(), key=lambda c: (-c.fused, c.id))[: p.neighbour_top]
        given = {c.id: c.fused for c in top}
        edges = view.fact_edges(list(given), [EdgeType.NEXT])
        # A neighbour joins the results only if the caller may see it (status, scope, filters).
        ends = [fid for e in edges for fid in (e.src, e.dst) if fid not in fused]
        visible = self._visible(view, ends, where, judged)
        for edge in edges:
            for here, there, share in (
                (edge.src, edge.dst, p.next_share),
                (edge.dst, edge.src, p.prev_share),
            ):
                if here in given and share and (there in fused or there in visible):
                    candidate = fused.setdefault(there, Candidate(there))
                    candidate.fused += share * given[here]
                    candidate.channels.setdefault("neighbour", {"from": here, "edge": "NEXT"})

    def _expand_into(
        self,
        view: GraphView,
        fused: dict[str, Candidate],
        anchors: Sequence[tuple[Entity, float, str]],
        where: Filter,
        plan: QueryPlan,
        weights: Mapping[str, float],
        judged: dict[str, bool],
    ) -> None:
        p = self.policy
        seeds = sorted(fused.values(), key=lambda c: (-c.fused, c.id))[: p.seeds]
        top = seeds[0].fused if seeds else 1.0
        activation = self.expand(
            {c.id: c.fused / top for c in seeds},
            {e.id: strength for e, strength, _ in anchors},
            depth=p.complex_depth if plan.complex else p.depth,
            intent=plan.intent,
            view=view,
        )
        reached = list(activation)
        if not reached:
            return
        allowed = self._visible(view, reached, where, judged)
        order = sorted((fid for fid in reached if fid in allowed), key=lambda f: (-activation[f].value, f))
        weight = weights.get("graph", 1.0)
        ranks = shared_ranks((activation[fid].value, place) for place, fid in enumerate(order, 1))
        for fid, rank in zip(order, ranks, strict=True):
            act = activation[fid]
            candidate = fused.setdefault(fid, Candidate(fid))
            candidate.fused += weight * act.value / (p.rrf_k + rank)
            candidate.channels["graph"] = {
                "rank": rank,
                "activation": round(act.value, 4),
                "hops": act.hops,
                "edge": act.edge,
                "from": act.from_id,
                **({"via_entity": act.via_entity} if act.via_entity else {}),
            }

    def _visible(
        self, view: GraphView, fact_ids: Sequence[str], where: Filter, judged: dict[str, bool]
    ) -> set[str]:
        """Those of ``fact_ids`` the caller may see (``_judge``); ``judged`` holds what this
        search judged already (nothing is written meanwhile), and gains the rest: its last check
        of all its candidates asked again for ~450 facts at 5k facts that the walk had judged."""
        asked = [fid for fid in dict.fromkeys(fact_ids) if fid not in judged]
        if asked:
            shown = self._judge(view, asked, where)
            judged.update((fid, fid in shown) for fid in asked)
        return {fid for fid in fact_ids if judged[fid]}

    def _judge(self, view: GraphView, fact_ids: Sequence[str], where: Filter) -> set[str]:
        """The facts the caller may see: every filter of ``where`` (scopes, statuses, kinds, tags,
        entities, time), as the index channels apply it.

        Judged on the graph's rows (cached in memory) as the vector index would judge them: a
        LanceDB query for the same answer cost ~9 ms at 100k facts. A filter of statuses and
        scopes alone (a plain search) is judged on the graph index's statuses instead, where
        ``view`` sees ``where.scopes``: reading every reached fact back cost ~30 ms a search at
        100k facts, when the fact cache holds few of them.
        """
        if where == Filter(statuses=where.statuses, scopes=where.scopes):
            wanted, found = where.statuses, view.statuses(fact_ids)
            return {fid for fid, status in found.items() if wanted is None or status in wanted}
        facts = self._graph.get_facts(fact_ids)
        about: dict[str, list[str]] = {}
        if where.entity_ids_any is not None:
            for edge in view.about_edges(list(facts)):
                about.setdefault(edge.src, []).append(edge.dst)
        return {fid for fid, fact in facts.items() if where.matches(fact_row(fact, about.get(fid, [])))}

    def expand(
        self,
        seed_facts: Mapping[str, float],
        seed_entities: Mapping[str, float],
        *,
        depth: int,
        intent: Intent = Intent.GENERAL,
        view: GraphView,
    ) -> dict[str, Activation]:
        """Spreading activation over the graph as ``view`` shows it (it never steps into a scope
        the view hides); returns the best activation per fact reached."""
        p = self.policy
        weights = dict(p.edge_weights)
        for edge_type, boost in p.intent_edge_boost.get(intent, {}).items():
            weights[edge_type] = weights.get(edge_type, 1.0) * boost
        # best[node]: the strongest path that reached it (seeds too: a seed that another seed or
        # an anchor points at is corroborated). A node is expanded once, at its first hop.
        best: dict[str, Activation] = {}
        expanded: set[str] = set()
        total = self._graph.fact_count()
        fact_frontier = {fid: Activation(v, 0, "seed", fid) for fid, v in seed_facts.items()}
        entity_frontier = {eid: Activation(v, 0, "anchor", eid) for eid, v in seed_entities.items()}

        # An entity passes activation on to facts other than the one it came from; when two
        # facts reach it, each must still hear from the other, so it keeps a runner-up path
        # from a different origin.
        runner_up: dict[str, Activation] = {}

        def offer(target: dict[str, Activation], node: str, act: Activation, origin: str) -> None:
            if node == origin:
                return
            current = target.get(node)
            if current is None or act.value > current.value:
                target[node] = act
                if current is not None and current.from_id != act.from_id:
                    runner_up[node] = current
            elif act.from_id != current.from_id:
                second = runner_up.get(node)
                if second is None or act.value > second.value:
                    runner_up[node] = act
            known = best.get(node)
            if known is None or act.value > known.value:
                best[node] = act

        for hop in range(1, depth + 1):
            expanded |= set(fact_frontier) | set(entity_frontier)
            next_facts: dict[str, Activation] = {}
            next_entities: dict[str, Activation] = {}
            for edge in view.fact_edges(list(fact_frontier), FACT_EDGES):
                for here, there in ((edge.src, edge.dst), (edge.dst, edge.src)):
                    if here in fact_frontier:
                        value = fact_frontier[here].value * _edge_weight(edge, weights) * p.hop_decay
                        offer(next_facts, there, Activation(value, hop, edge.type, here), here)
            # An entity reached at the last hop is never walked from, and only facts are returned:
            # the last hop reads no edge that leads to one.
            last = hop == depth
            for edge in [] if last else view.about_edges(list(fact_frontier)):
                value = fact_frontier[edge.src].value * weights[EdgeType.ABOUT] * p.hop_decay
                offer(next_entities, edge.dst, Activation(value, hop, EdgeType.ABOUT, edge.src), edge.src)
            for edge in view.tag_neighbours(list(fact_frontier), limit=p.max_fanout_per_node):
                value = fact_frontier[edge.src].value * weights[EdgeType.HAS_TAG] * p.hop_decay
                offer(next_facts, edge.dst, Activation(value, hop, EdgeType.HAS_TAG, edge.src), edge.src)
            known = self._entities.get_many(list(entity_frontier))  # one read a hop
            specific = {eid: _specificity(known.get(eid), total) for eid in entity_frontier}
            walkable = [(eid, act) for eid, act in entity_frontier.items() if specific[eid] >= p.hub_min_idf]
            walkable.sort(key=lambda kv: -kv[1].value * specific[kv[0]])
            strongest = walkable[: p.max_fanout_per_node]
            about = view.facts_about_many(
                [eid for eid, _ in strongest], limit=p.max_fanout_per_node, statuses=ACTIVE_STATUSES
            )
            for eid, act in strongest:
                entity = known.get(eid)
                name = entity.name if entity else None
                second = runner_up.get(eid)
                for fid in about[eid]:
                    via = second if fid == act.from_id and second is not None else act
                    value = via.value * specific[eid] * weights[EdgeType.ABOUT] * p.hop_decay
                    offer(next_facts, fid, Activation(value, hop, EdgeType.ABOUT, eid, name), via.from_id)
            related = (
                []
                if last
                else view.related_entities([eid for eid, _ in walkable], limit=p.max_fanout_per_node)
            )
            for here, there, strength in related:
                value = entity_frontier[here].value * weights[EdgeType.RELATES] * strength * p.hop_decay
                offer(next_entities, there, Activation(value, hop, EdgeType.RELATES, here), here)
            keep = sorted(next_facts.items(), key=lambda kv: -kv[1].value)[: p.max_expanded]
            fact_frontier = {fid: act for fid, act in keep if fid not in expanded}
            entity_frontier = {eid: act for eid, act in next_entities.items() if eid not in expanded}
            if not fact_frontier and not entity_frontier:
                break
        return {node: act for node, act in best.items() if node.startswith("f_")}


def _within_period(where: Filter, plan: QueryPlan) -> Filter | None:
    """``where`` narrowed to the period the query names, if it names one that ``where`` leaves room for."""
    if not plan.time_phrase or (plan.after is None and plan.before is None):
        return None
    after = max((t for t in (where.after, plan.after) if t is not None), default=None)
    before = min((t for t in (where.before, plan.before) if t is not None), default=None)
    if after is not None and before is not None and after >= before:
        return None
    return replace(where, after=after, before=before)


def _specificity(entity: Entity | None, total_facts: int) -> float:
    """IDF of an entity over the facts: 1 for one mention in a large store, ~0 for a hub."""
    mentions = entity.mention_count if entity else 0
    if total_facts <= 1:
        return 1.0
    return math.log1p(total_facts / (1 + mentions)) / math.log1p(total_facts)


def _edge_weight(edge: EdgeRow, weights: Mapping[str, float]) -> float:
    stored = edge.props.get("weight")
    base = weights.get(edge.type, 0.5)
    if isinstance(stored, int | float) and not math.isnan(stored):
        return base * max(0.0, min(1.0, float(stored)))
    return base
