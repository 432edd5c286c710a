"""The retrieval policy: every number that shapes which facts a query finds and how they rank.

Why each default is what it is, and what was tried against it, is in docs/retrieval-experiments.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hippograph.domain.models import EdgeType
from hippograph.text.query_intent import Intent


@dataclass(frozen=True)
class RetrievalPolicy:
    """Every number retrieval uses; docs/retrieval-experiments.md says what each was measured against."""

    rrf_k: int = 60
    # Plain RRF (0) ignores how far apart scores are, so a strong keyword match and a weak
    # one a rank lower tie. Each hit's share is scaled by (score / best score in its channel)
    # to this power; ranks still break ties between equal scores.
    score_power: float = 1.0
    # BM25 counts double: exact words carry most of what a question asks. The entity channel
    # counts little because anchor_bonus already favours facts about the named entities.
    # The "window" channel, run when the query names a period, is the vector channel restricted
    # to the facts of that period (so that they are weighed even when the whole store's nearest
    # lie elsewhere): it counts as the vector channel does.
    channel_weights: Mapping[str, float] = field(
        default_factory=lambda: {"vector": 1.0, "fts": 2.0, "entity": 0.25, "graph": 0.8, "window": 1.0}
    )
    # How many candidates each channel contributes, as a multiple of the caller's limit.
    fanout: int = 4
    min_candidates: int = 30
    graph: bool = True
    entity_channel: bool = True
    # The entity channel ranks the facts about the query's anchor entities by vector
    # similarity, taken from the vector channel's top k * entity_pool (0: a LanceDB query of
    # its own, as good and ~8 ms slower at 100k facts).
    entity_pool: int = 3
    seeds: int = 5
    depth: int = 2
    complex_depth: int = 3
    hop_decay: float = 0.7
    edge_weights: Mapping[str, float] = field(
        default_factory=lambda: {
            EdgeType.NEXT: 0.8,
            EdgeType.CAUSES: 0.9,
            EdgeType.DERIVED_FROM: 0.8,
            EdgeType.SUPERSEDES: 0.9,
            EdgeType.RELATES_TO: 1.0,
            EdgeType.CONTRADICTS: 0.6,
            EdgeType.ABOUT: 0.6,
            EdgeType.RELATES: 0.6,
            EdgeType.HAS_TAG: 0.8,
        }
    )
    # Intent routing: edges that matter more for a kind of question.
    intent_edge_boost: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: {
            Intent.WHY: {EdgeType.CAUSES: 1.5, EdgeType.DERIVED_FROM: 1.5},
            Intent.WHEN: {EdgeType.NEXT: 1.3},
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
    # A time phrase in the query ("in May 2023", "since last week") needs no number here: a
    # fact outside its period is weighed 1 / (1 + distance / the period's length), so the phrase
    # sets its own scale (ranking.time_factor). "Recently" names no length, so this is it: about
    # a month, so that facts of the last weeks count fully and one two months back half.
    recent_days: int = 30
    # A turn is indexed with the turn before it, so a match often stands for its predecessor
    # (the question it answers, or the statement it reacts to); less often the answer is the
    # reply after it. Each of the ``neighbour_top`` best candidates passes these shares of its
    # fused score to its NEXT predecessor / successor (in-memory edges, well under 1 ms).
    prev_share: float = 0.3
    next_share: float = 0.1
    neighbour_top: int = 20
    # Candidates centred on an entity the query names gain this factor: "what does Maya like"
    # is about Maya, and a fact that only addresses her by name, or shares the question's other
    # words, is less likely what is asked for. A fact is centred on its subject or object when
    # it has one (a chat turn's speaker is its subject), else on every entity it names.
    anchor_bonus: float = 1.0
    # "No confident match": a query that names someone or something no visible fact mentions,
    # and whose best result is less similar than this (cosine of the MiniLM vectors, which
    # means the same for every query), gets no results. Chosen by leave-one-conversation-out
    # on LoCoMo dev, each conversation asked its own and another conversation's questions
    # (bench/results/confidence.md).
    min_relevance: float = 0.49
    # Any other query whose best result is less similar than this keeps its results under the
    # note "no confident match": the nearest facts may not answer it. Chosen leave-one-memory-out
    # on written everyday memories (bench/abstention.py): the highest floor that notes at most
    # 10% of the questions whose answer is in the top 3.
    confident_relevance: float = 0.44
    # Results after the first whose relevance is under this are left out: padding, not answers
    # ("how do I fix the wifi": the router, then facts at 0.04, 0.02, 0.01); not where an entity
    # or a tag filter chose the facts (an entity's profile lists its facts). 0.05, 0.1 and 0.15
    # cost nothing by leave-one-conversation-out on LoCoMo (R@10 0.791 each, 2026-12-02), and no
    # answer in the top 3 of the written everyday memory it was tried on (everyday_a): the
    # highest of them.
    tail_relevance: float = 0.15
