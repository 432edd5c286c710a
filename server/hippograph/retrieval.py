"""Which facts answer a query, and why: candidates, graph expansion, fusion, scoring.

1. Channels each rank fact ids: ``vector`` (kNN over fact embeddings), ``fts`` (BM25 over
   fact text) and ``entity`` (kNN restricted to facts about entities the query names,
   by alias or by entity-vector match).
2. ``graph``: spreading activation from the best candidates and the anchor entities,
   breadth-first over typed edges (edge weight x per-hop decay), fan-out bounded per node
   so a hub cannot blow up latency. It finds facts that share no words with the query.
3. Score-aware weighted reciprocal rank fusion over the channels (each hit's 1/(k + rank),
   scaled by its score relative to the channel's best), then the lifecycle's relevance and
   status weight. Every candidate keeps its per-channel ranks, scores and graph path.
If graph expansion fails, the other channels still answer and a note says so.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hippograph.entity_index import EntityIndex
from hippograph.graph import FACT_EDGES, EdgeRow, GraphStore
from hippograph.models import Entity
from hippograph.query_intent import Intent, QueryPlan, content_words
from hippograph.vectors import Filter, Hit, VectorStore, fact_row

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetrievalPolicy:
    rrf_k: int = 60
    # Plain RRF (0) ignores how far apart scores are, so a strong keyword match and a weak
    # one a rank lower tie. Each hit's share is scaled by (score / best score in its channel)
    # to this power; ranks still break ties between equal scores.
    score_power: float = 1.0
    # LoCoMo dev, 2 conversations, search R@10 / NDCG@10 (score-aware fusion): fts 1.0 ->
    # 0.666 / 0.467, 1.5 -> 0.715 / 0.501, 2.0 -> 0.759 / 0.540, 3.0 -> 0.757 / 0.542; with
    # fts 2.0, entity 1.2 -> 0.732 / 0.513, entity 0.5 -> 0.772 / 0.540. Entity 0.25 since
    # anchor_bonus (see there).
    channel_weights: Mapping[str, float] = field(
        default_factory=lambda: {"vector": 1.0, "fts": 2.0, "entity": 0.25, "graph": 0.8}
    )
    # How many candidates each channel contributes, as a multiple of the caller's limit.
    fanout: int = 4
    min_candidates: int = 30
    graph: bool = True
    entity_channel: bool = True
    # The entity channel ranks the facts about the query's anchor entities by vector
    # similarity. It takes them from the vector channel's top k * entity_pool; 0 runs a
    # query of its own (a LanceDB prefilter on entity_ids), which cost ~9-11 ms at 100k facts
    # against ~2 ms for the wider top. LoCoMo dev, 2 conversations, search R@10 / NDCG@10 /
    # cat1: 0.785 / 0.567 / 0.370 either way.
    entity_pool: int = 3
    seeds: int = 5
    depth: int = 2
    complex_depth: int = 3
    hop_decay: float = 0.7
    edge_weights: Mapping[str, float] = field(
        default_factory=lambda: {
            "NEXT": 0.8,
            "CAUSES": 0.9,
            "DERIVED_FROM": 0.8,
            "SUPERSEDES": 0.9,
            "RELATES_TO": 1.0,
            "CONTRADICTS": 0.6,
            "ABOUT": 0.6,
            "RELATES": 0.6,
            "HAS_TAG": 0.8,
        }
    )
    # Intent routing: edges that matter more for a kind of question.
    intent_edge_boost: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: {
            Intent.WHY: {"CAUSES": 1.5, "DERIVED_FROM": 1.5},
            Intent.WHEN: {"NEXT": 1.3},
        }
    )
    intent_channel_boost: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: {Intent.WHO: {"entity": 1.4}, Intent.WHAT: {"entity": 1.2}}
    )
    max_fanout_per_node: int = 12
    # An entity passes activation to its facts scaled by its specificity, an IDF:
    # ln(1 + N / (1 + mentions)) / ln(1 + N). A hub (a speaker in every other fact) says
    # little about which of its facts matter, so below ``hub_min_idf`` it is not walked at
    # all (which also keeps the walk fast on large stores).
    hub_min_idf: float = 0.3
    max_expanded: int = 150
    entity_min_similarity: float = 0.62
    entity_vector_anchors: int = 2
    # Facts inside a time phrase of the query ("in May 2023") rank higher; outside, lower.
    time_match_boost: float = 1.3
    time_miss_factor: float = 0.7
    # A turn is indexed with the turn before it, so a match often stands for its predecessor
    # (the question it answers, or the statement it reacts to); less often the answer is the
    # reply after it. Each of the ``neighbour_top`` best candidates passes these shares of its
    # fused score to its NEXT predecessor / successor (in-memory edges, well under 1 ms).
    # LoCoMo dev search R@10 / NDCG@10 / cat1 R@10, 2 conversations: off 0.772 / 0.540 / 0.346,
    # prev 0.3 0.774 / 0.561 / 0.366, next 0.3 0.750 / 0.480 / 0.321, prev 0.3 + next 0.1
    # 0.783 / 0.565 / 0.370; full dev set: off 0.734 / 0.525 / 0.392, prev 0.3 + next 0.1
    # 0.763 / 0.552 / 0.424.
    prev_share: float = 0.3
    next_share: float = 0.1
    neighbour_top: int = 20  # 10 before anchor_bonus (see there)
    # Pseudo-relevance feedback (off): words shared by at least two of the ``prf_docs`` best
    # fused candidates, not in the query, extend the keyword query, run again as channel "prf".
    # Full dev set with neighbour sharing: 4 terms 0.758 / 0.550 / 0.424 against 0.763 / 0.552 /
    # 0.424 without, for one more FTS query (~+10 ms p50).
    prf_terms: int = 0
    prf_docs: int = 5
    # Candidates found by both the vector and the keyword channel gain this factor (off: 0.3
    # cost 2 conversations 0.772 / 0.540 -> 0.744 / 0.521).
    agreement_bonus: float = 0.0
    # Candidates about an entity the query names gain this factor: "what does Maya like" is
    # about Maya, and a fact that only addresses her by name, or shares the question's other
    # words, is less likely what is asked for. LoCoMo dev, all 5 conversations, search R@10 /
    # NDCG@10 / cat1 (kept stores, no access recording): off 0.760 / 0.551 / 0.422; 0.5 0.768 /
    # 0.581 / 0.428; 1.0 0.771 / 0.583 / 0.431; 2.0 0.769 / 0.583 / 0.439. With 1.0 the entity
    # channel matters less: its weight 0.5 -> 0.25 0.778 / 0.593 / 0.446 (0.0: 0.777 / 0.593 /
    # 0.438), and neighbour_top 10 -> 20 0.782 / 0.594 / 0.450. Measured and not kept:
    # dropping anchor names from the keyword query (no change: a speaker's name is in half the
    # turns, so BM25 gives it little weight anyway), and a per-session diversity factor (0.85:
    # 0.731 / 0.536 / 0.420, worse everywhere).
    anchor_bonus: float = 1.0


@dataclass
class Candidate:
    id: str
    fused: float = 0.0
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Activation:
    value: float
    hops: int
    edge: str
    from_id: str
    via_entity: str | None = None


def fuse(
    ranked: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int, score_power: float = 0.0
) -> dict[str, Candidate]:
    """Weighted RRF: sum over channels of weight / (k + rank) x (score / best) ** score_power."""
    by_id: dict[str, Candidate] = {}
    for channel, hits in ranked.items():
        weight = weights.get(channel, 1.0)
        best = max((hit.score for hit in hits), default=0.0)
        for hit in hits:
            share = max(hit.score, 0.0) / best if best > 0 else 1.0
            candidate = by_id.setdefault(hit.id, Candidate(hit.id))
            candidate.fused += weight / (k + hit.rank) * share**score_power
            candidate.channels[channel] = {"rank": hit.rank, "score": round(hit.score, 6)}
    return by_id


class Retriever:
    def __init__(
        self,
        graph: GraphStore,
        vectors: VectorStore,
        entities: EntityIndex,
        policy: RetrievalPolicy | None = None,
    ) -> None:
        self._graph = graph
        self._vectors = vectors
        self._entities = entities
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

    def retrieve(
        self, query: str, vector: np.ndarray, where: Filter, limit: int, plan: QueryPlan
    ) -> tuple[list[Candidate], list[str]]:
        """Fused candidates (best first, not yet lifecycle-weighted) and notes for the caller."""
        p = self.policy
        notes: list[str] = []
        k = max(limit * p.fanout, p.min_candidates)
        # One after the other: run side by side in threads they were slower on two cores
        # (graph off, 100k facts: p50 37 ms against 29 ms), as LanceDB has threads of its own.
        anchors = self.anchors(query, vector, where.scopes or ()) if p.entity_channel or p.graph else []
        by_entity = p.entity_channel and bool(anchors)
        pooled = by_entity and p.entity_pool > 0
        by_vector = self._vectors.vector_search("facts", vector, k * p.entity_pool if pooled else k, where)
        by_text = self._vectors.text_search("facts", query, k, where)
        ranked: dict[str, list[Hit]] = {"vector": by_vector[:k], "fts": by_text}
        if pooled:
            ranked["entity"] = self._about_anchors(by_vector, anchors)[:k]
        elif by_entity:
            restricted = replace(where, entity_ids_any=[e.id for e, _, _ in anchors])
            ranked["entity"] = self._vectors.vector_search("facts", vector, k, restricted)
        weights = dict(p.channel_weights)
        for channel, boost in p.intent_channel_boost.get(plan.intent, {}).items():
            weights[channel] = weights.get(channel, 1.0) * boost
        fused = fuse(ranked, weights, p.rrf_k, p.score_power)
        if p.prf_terms > 0:
            extra = self._feedback_terms(query, fused)
            if extra:
                ranked["prf"] = self._vectors.text_search("facts", f"{query} {' '.join(extra)}", k, where)
                fused = fuse(ranked, weights, p.rrf_k, p.score_power)
        if p.agreement_bonus:
            for candidate in fused.values():
                if "vector" in candidate.channels and "fts" in candidate.channels:
                    candidate.fused *= 1 + p.agreement_bonus
        if "entity" in ranked:
            names = ", ".join(e.name for e, _, _ in anchors)
            for hit in ranked["entity"]:
                fused[hit.id].channels["entity"]["via"] = names

        if p.graph:
            try:
                self._expand_into(fused, ranked, anchors, where, plan, weights)
            except Exception as err:  # the graph is an enhancement: never fail the caller for it
                log.exception("graph expansion failed")
                notes.append(f"graph expansion failed ({type(err).__name__}); results are from search alone")
        if p.next_share or p.prev_share:
            self._share_with_neighbours(fused)
        if p.anchor_bonus:
            self._favour_anchored(fused, anchors)
        return sorted(fused.values(), key=lambda c: (-c.fused, c.id)), notes

    def _favour_anchored(
        self, fused: Mapping[str, Candidate], anchors: Sequence[tuple[Entity, float, str]]
    ) -> None:
        named = {entity.id for entity, _, how in anchors if how == "name"}
        if not named:
            return
        for fid in self._graph.about_any(list(fused), named):
            fused[fid].fused *= 1 + self.policy.anchor_bonus

    def _about_anchors(self, hits: Sequence[Hit], anchors: Sequence[tuple[Entity, float, str]]) -> list[Hit]:
        """The hits about any of the anchors, in order, ranked afresh."""
        about = self._graph.about_any([h.id for h in hits], [entity.id for entity, _, _ in anchors])
        return [replace(hit, rank=rank) for rank, hit in enumerate((h for h in hits if h.id in about), 1)]

    def _feedback_terms(self, query: str, fused: Mapping[str, Candidate]) -> list[str]:
        p = self.policy
        top = sorted(fused.values(), key=lambda c: -c.fused)[: p.prf_docs]
        facts = self._graph.get_facts([c.id for c in top])
        asked = set(content_words(query))
        counts: dict[str, int] = {}
        for fact in facts.values():
            for word in set(content_words(fact.content)) - asked:
                if len(word) > 2 and not word.isdigit():
                    counts[word] = counts.get(word, 0) + 1
        shared = sorted((w for w, n in counts.items() if n >= 2), key=lambda w: (-counts[w], w))
        return shared[: p.prf_terms]

    def _share_with_neighbours(self, fused: dict[str, Candidate]) -> None:
        p = self.policy
        top = sorted(fused.values(), key=lambda c: (-c.fused, c.id))[: p.neighbour_top]
        given = {c.id: c.fused for c in top}
        for edge in self._graph.fact_edges(list(given), ["NEXT"]):
            for here, there, share in (
                (edge.src, edge.dst, p.next_share),
                (edge.dst, edge.src, p.prev_share),
            ):
                if here in given and share:
                    candidate = fused.setdefault(there, Candidate(there))
                    candidate.fused += share * given[here]
                    candidate.channels.setdefault("neighbour", {"from": here, "edge": "NEXT"})

    def _expand_into(
        self,
        fused: dict[str, Candidate],
        ranked: Mapping[str, Sequence[Hit]],
        anchors: Sequence[tuple[Entity, float, str]],
        where: Filter,
        plan: QueryPlan,
        weights: Mapping[str, float],
    ) -> None:
        p = self.policy
        seeds = sorted(fused.values(), key=lambda c: -c.fused)[: p.seeds]
        top = seeds[0].fused if seeds else 1.0
        activation = self.expand(
            {c.id: c.fused / top for c in seeds},
            {e.id: strength for e, strength, _ in anchors},
            depth=p.complex_depth if plan.complex else p.depth,
            intent=plan.intent,
        )
        reached = list(activation)
        if not reached:
            return
        allowed = self._visible(reached, where)
        order = sorted((fid for fid in reached if fid in allowed), key=lambda f: -activation[f].value)
        weight = weights.get("graph", 1.0)
        for rank, fid in enumerate(order, 1):
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

    def _visible(self, fact_ids: Sequence[str], where: Filter) -> set[str]:
        """The facts the caller may see: the graph knows nothing of scopes and filters.

        Judged on the graph's rows (cached in memory) as the vector index would judge them: a
        LanceDB query for the same answer cost ~9 ms at 100k facts.
        """
        facts = self._graph.get_facts(fact_ids)
        about: dict[str, list[str]] = {}
        if where.entity_ids_any is not None:
            for edge in self._graph.about_edges(list(facts)):
                about.setdefault(edge.src, []).append(edge.dst)
        return {fid for fid, fact in facts.items() if where.matches(fact_row(fact, about.get(fid, [])))}

    def _specificity(self, entity_id: str, total_facts: int) -> float:
        """IDF of an entity over the facts: 1 for one mention in a large store, ~0 for a hub."""
        entity = self._entities.get(entity_id)
        mentions = entity.mention_count if entity else 0
        if total_facts <= 1:
            return 1.0
        return math.log1p(total_facts / (1 + mentions)) / math.log1p(total_facts)

    def expand(
        self,
        seed_facts: Mapping[str, float],
        seed_entities: Mapping[str, float],
        *,
        depth: int,
        intent: Intent = Intent.GENERAL,
    ) -> dict[str, Activation]:
        """Spreading activation over the graph; returns the best activation per fact reached."""
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
            for edge in self._graph.fact_edges(list(fact_frontier), FACT_EDGES):
                for here, there in ((edge.src, edge.dst), (edge.dst, edge.src)):
                    if here in fact_frontier:
                        value = fact_frontier[here].value * _edge_weight(edge, weights) * p.hop_decay
                        offer(next_facts, there, Activation(value, hop, edge.type, here), here)
            for edge in self._graph.about_edges(list(fact_frontier)):
                value = fact_frontier[edge.src].value * weights["ABOUT"] * p.hop_decay
                offer(next_entities, edge.dst, Activation(value, hop, "ABOUT", edge.src), edge.src)
            for edge in self._graph.tag_neighbours(list(fact_frontier), limit=p.max_fanout_per_node):
                value = fact_frontier[edge.src].value * weights["HAS_TAG"] * p.hop_decay
                offer(next_facts, edge.dst, Activation(value, hop, "HAS_TAG", edge.src), edge.src)
            specific = {eid: self._specificity(eid, total) for eid in entity_frontier}
            walkable = [(eid, act) for eid, act in entity_frontier.items() if specific[eid] >= p.hub_min_idf]
            walkable.sort(key=lambda kv: -kv[1].value * specific[kv[0]])
            strongest = walkable[: p.max_fanout_per_node]
            for eid, act in strongest:
                entity = self._entities.get(eid)
                name = entity.name if entity else None
                second = runner_up.get(eid)
                for fid in self._graph.facts_about(
                    eid, limit=p.max_fanout_per_node, statuses=("staged", "confirmed")
                ):
                    via = second if fid == act.from_id and second is not None else act
                    value = via.value * specific[eid] * weights["ABOUT"] * p.hop_decay
                    offer(next_facts, fid, Activation(value, hop, "ABOUT", eid, name), via.from_id)
            related = self._graph.related_entities([eid for eid, _ in walkable], limit=p.max_fanout_per_node)
            for here, there, strength in related:
                value = entity_frontier[here].value * weights["RELATES"] * strength * p.hop_decay
                offer(next_entities, there, Activation(value, hop, "RELATES", here), here)
            keep = sorted(next_facts.items(), key=lambda kv: -kv[1].value)[: p.max_expanded]
            fact_frontier = {fid: act for fid, act in keep if fid not in expanded}
            entity_frontier = {eid: act for eid, act in next_entities.items() if eid not in expanded}
            if not fact_frontier and not entity_frontier:
                break
        return {node: act for node, act in best.items() if node.startswith("f_")}


def _edge_weight(edge: EdgeRow, weights: Mapping[str, float]) -> float:
    stored = edge.props.get("weight")
    base = weights.get(edge.type, 0.5)
    if isinstance(stored, int | float) and not math.isnan(stored):
        return base * max(0.0, min(1.0, float(stored)))
    return base
