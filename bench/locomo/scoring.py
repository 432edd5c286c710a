"""Score an answer against a question's evidence turns (R@5, R@10, NDCG@10) and summarize a method."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.locomo.data import CATEGORIES, Question

TOP_K = 10


def count_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class Answer:
    turns: list[str | None]  # ranked dia ids; None = a result that is no turn (or a repeat)
    tokens: int
    latency_ms: float | None = None


@dataclass(frozen=True)
class Score:
    conv_id: str
    category: int
    r5: float
    r10: float
    ndcg10: float
    tokens: int
    latency_ms: float | None


def score(question: Question, conv_id: str, answer: Answer) -> Score:
    relevant = set(question.evidence)
    gains = [turn is not None and turn in relevant for turn in answer.turns[:TOP_K]]
    dcg = sum(1 / math.log2(rank + 2) for rank, gain in enumerate(gains) if gain)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(len(relevant), TOP_K)))
    return Score(
        conv_id,
        question.category,
        sum(gains[:5]) / len(relevant),
        sum(gains) / len(relevant),
        dcg / ideal,
        answer.tokens,
        answer.latency_ms,
    )


def summarize(scores: Sequence[Score]) -> dict[str, Any]:
    def means(rows: Sequence[Score]) -> dict[str, float]:
        return {
            "n": len(rows),
            "recall@5": float(np.mean([r.r5 for r in rows])),
            "recall@10": float(np.mean([r.r10 for r in rows])),
            "ndcg@10": float(np.mean([r.ndcg10 for r in rows])),
        }

    latencies = [r.latency_ms for r in scores if r.latency_ms is not None]
    return {
        "overall": means(scores),
        "by_category": {
            c: means(rows) for c in CATEGORIES if (rows := [r for r in scores if r.category == c])
        },
        "by_conversation": {
            cid: means([r for r in scores if r.conv_id == cid])
            for cid in dict.fromkeys(r.conv_id for r in scores)
        },
        "tokens_per_query": float(np.mean([r.tokens for r in scores])),
        "latency_ms": {
            "mean": float(np.mean(latencies)),
            "p50": float(np.percentile(latencies, 50)),
            "p95": float(np.percentile(latencies, 95)),
        }
        if latencies
        else None,
    }
