"""Build a store of N facts by the product path (remember_many, link), and the vector cache that
the larger sizes (built by ``bulk``) draw on."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.perf import vector_cache
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
    """The model, plus the vectors it computed for the same texts before (``vector_cache``).

    Only for building a large store faster: every latency figure uses the model itself.
    """

    def __init__(self, model: Any, cache_root: Path, models_dir: Path) -> None:
        self.model, self.name, self.dim = model, model.name, model.dim
        self.directory = vector_cache.cache_dir(cache_root, models_dir, model.name)
        self.vectors = vector_cache.load(self.directory)
        self.hits = self.misses = 0
        self.loaded = len(self.vectors)
        self._new: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return self.model.embed(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.model.embed(missing), strict=True))
            self._new += missing
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        return np.stack([self.vectors[t] for t in texts])

    def count_tokens(self, text: str) -> int:
        return int(self.model.count_tokens(text))

    def save(self) -> None:
        """Keep what the model embedded for this run, as another shard."""
        if self._new:
            vector_cache.add_shard(self.directory, self._new, np.stack([self.vectors[t] for t in self._new]))
            self._new = []
