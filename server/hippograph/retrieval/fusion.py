"""Fusion: the channels' ranked lists become one score per fact (score-aware weighted RRF)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hippograph.store.seam import Hit


@dataclass
class Candidate:
    id: str
    fused: float = 0.0
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)


def shared_ranks(scored: Iterable[tuple[float, int]]) -> Iterator[int]:
    """The rank of each (score, rank) in order, scores alike sharing the first of their ranks:
    which of them an engine lists first is no evidence, so it changes no score."""
    first: dict[float, int] = {}
    for score, rank in scored:
        yield first.setdefault(score, rank)


def fuse(
    ranked: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int, score_power: float = 0.0
) -> dict[str, Candidate]:
    """Weighted RRF: sum over channels of weight / (k + rank) x (score / best) ** score_power.

    Hits a channel scores alike share the best of their ranks (``shared_ranks``)."""
    by_id: dict[str, Candidate] = {}
    for channel, hits in ranked.items():
        weight = weights.get(channel, 1.0)
        best = max((hit.score for hit in hits), default=0.0)
        for hit, rank in zip(hits, shared_ranks((hit.score, hit.rank) for hit in hits), strict=True):
            # To 4 digits: engines compute a score in float32 or float64 (LanceDB's and
            # PostgreSQL's BM25 differ in the 7th digit), which must not reorder a memory's answers.
            share = round(max(hit.score, 0.0) / best, 4) if best > 0 else 1.0
            candidate = by_id.setdefault(hit.id, Candidate(hit.id))
            candidate.fused += weight / (k + rank) * share**score_power
            candidate.channels[channel] = {"rank": rank, "score": round(hit.score, 6)}
    return by_id
