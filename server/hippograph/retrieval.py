"""Candidate generation and fusion: which facts answer a query, and why.

Channels each return a ranked list of fact ids: ``vector`` (kNN over fact embeddings)
and ``fts`` (BM25 over fact text). Weighted reciprocal rank fusion combines them; every
candidate keeps each channel's rank and score so a result can say why it is there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from hippograph.vectors import Filter, Hit, VectorStore


@dataclass(frozen=True)
class RetrievalPolicy:
    rrf_k: int = 60
    channel_weights: Mapping[str, float] = field(default_factory=lambda: {"vector": 1.0, "fts": 1.0})
    # How many candidates each channel contributes, as a multiple of the caller's limit.
    fanout: int = 4
    min_candidates: int = 30


@dataclass
class Candidate:
    id: str
    fused: float = 0.0
    channels: dict[str, dict[str, float]] = field(default_factory=dict)

    def reasons(self) -> dict[str, dict[str, float]]:
        return {name: dict(detail) for name, detail in self.channels.items()}


def fuse(ranked: Mapping[str, list[Hit]], policy: RetrievalPolicy) -> list[Candidate]:
    """Weighted reciprocal rank fusion: sum over channels of weight / (k + rank)."""
    by_id: dict[str, Candidate] = {}
    for channel, hits in ranked.items():
        weight = policy.channel_weights.get(channel, 1.0)
        for hit in hits:
            candidate = by_id.setdefault(hit.id, Candidate(hit.id))
            candidate.fused += weight / (policy.rrf_k + hit.rank)
            candidate.channels[channel] = {"rank": hit.rank, "score": round(hit.score, 6)}
    return sorted(by_id.values(), key=lambda c: (-c.fused, c.id))


class Retriever:
    def __init__(self, vectors: VectorStore, policy: RetrievalPolicy | None = None) -> None:
        self._vectors = vectors
        self.policy = policy or RetrievalPolicy()

    def candidates(self, query: str, query_vector: np.ndarray, where: Filter, limit: int) -> list[Candidate]:
        k = max(limit * self.policy.fanout, self.policy.min_candidates)
        ranked = {
            "vector": self._vectors.vector_search("facts", query_vector, k, where),
            "fts": self._vectors.text_search("facts", query, k, where),
        }
        return fuse(ranked, self.policy)
