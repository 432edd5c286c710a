"""The retrieval policy: every number that shapes which facts a query finds and how they rank.

Why each default is what it is, and what was tried against it, is in docs/retrieval-experiments.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hippograph.text.query_intent import Intent


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
