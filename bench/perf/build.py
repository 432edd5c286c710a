"""Build a store of N facts by the product path (remember_many, link); cached vectors above 10k."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.perf.measure import log
from bench.perf.workload import GenFact, remember_kwargs

BUILD_CHUNK = 2_000  # facts per remember_many call while building: progress in the log
# Stores larger than this are built with vectors the model computed in earlier runs (see
# CachedEmbedder): embedding 100k facts takes the model ~7 min of a 20-minute budget. The
# bulk-import figure comes from the sizes built with the model itself.
CACHE_ABOVE = 10_000
DEFAULT_VECTOR_CACHE = Path.home() / ".cache" / "hippograph" / "bench-vectors"


def open_memory(data_dir: Path, models_dir: Path, embedder: Any) -> Any:
    """The store in ``data_dir``, with background maintenance off when the Settings have it."""
    from hippograph.config import Settings
    from hippograph.service.memory import Memory

    options: dict[str, Any] = {"data_dir": data_dir, "models_dir": models_dir}
    if "maintenance_interval_s" in Settings.model_fields:
        options["maintenance_interval_s"] = 0
    return Memory.open(Settings(**options), embedder=embedder)


def build(memory: Any, facts: Sequence[GenFact], times: Sequence[str]) -> dict[str, Any]:
    """The product path: remember_many over the corpus, link() for CAUSES. Returns timings."""
    ids: list[str] = []
    remember_s = 0.0
    link_s = 0.0
    started = time.perf_counter()
    for start in range(0, len(facts), BUILD_CHUNK):
        chunk = facts[start : start + BUILD_CHUNK]
        items = [{"content": f.content, **remember_kwargs(f, times[start + i])} for i, f in enumerate(chunk)]
        t0 = time.perf_counter()
        ids += [out.id for out in memory.remember_many(items)]
        t1 = time.perf_counter()
        remember_s += t1 - t0
        for i, fact in enumerate(chunk, start):
            if fact.cause is not None:
                memory.link(ids[fact.cause], ids[i], "causes")
        link_s += time.perf_counter() - t1
        log(f"  remembered {len(ids)}/{len(facts)} ({len(ids) / remember_s:.0f} facts/s)")
    return {
        "route": "remember_many",
        "seconds": round(time.perf_counter() - started, 2),
        "remember_seconds": round(remember_s, 2),
        "link_seconds": round(link_s, 2),
        "facts_per_s": round(len(facts) / remember_s, 1) if remember_s else None,
    }


class CachedEmbedder:
    """The model, plus the vectors it computed for the same texts in earlier runs.

    Only for building a large store faster: every latency figure uses the model itself. The
    cache file is named by a digest of the model's files, so another model never reads it.
    """

    def __init__(self, model: Any, cache_dir: Path, models_dir: Path) -> None:
        self.model, self.name, self.dim = model, model.name, model.dim
        marker = models_dir / "all-MiniLM-L6-v2-int8" / "hippograph-model.json"
        tag = hashlib.sha256(marker.read_bytes() if marker.exists() else model.name.encode()).hexdigest()[:16]
        self.path = cache_dir / f"vectors-{tag}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        self.hits = self.misses = 0
        if self.path.exists():
            with np.load(self.path) as data:
                self.vectors = dict(zip(data["texts"].tolist(), data["vectors"], strict=True))
        self.loaded = len(self.vectors)
        self._from_file = set(self.vectors)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.model.embed(missing), strict=True))
        self.misses += len(missing)
        self.hits += sum(text in self._from_file for text in dict.fromkeys(texts))
        if not texts:
            return self.model.embed(texts)
        return np.stack([self.vectors[t] for t in texts])

    def count_tokens(self, text: str) -> int:
        return int(self.model.count_tokens(text))

    def save(self) -> None:
        if len(self.vectors) == self.loaded:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".partial.npz")
        texts = list(self.vectors)
        with partial.open("wb") as out:
            np.savez(out, texts=np.array(texts), vectors=np.stack([self.vectors[t] for t in texts]))
        os.replace(partial, self.path)
