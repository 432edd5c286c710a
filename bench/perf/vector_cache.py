"""The model's vectors for the corpus, computed once and kept on disk in shards.

Embedding a million facts takes the model well over an hour on two cores, so stores above
``build.CACHE_ABOVE`` facts are built from vectors the model computed before, for the very same
texts. A shard holds the vectors of a run of distinct texts in corpus order, so a 100k store
needs only the first shards of a 1M fill, and a fill cut short keeps every shard it finished.
The directory is named by a digest of the model's files: another model never reads it.

``python -m bench.perf.vector_cache --facts 1000000`` fills the cache ahead of a run.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

SHARD_TEXTS = 20_000
_SHARDS = "shard-[0-9][0-9][0-9][0-9][0-9].npz"  # not a shard still being written


def cache_dir(root: Path, models_dir: Path, model_name: str) -> Path:
    """The directory of one model's shards under ``root``."""
    marker = models_dir / "all-MiniLM-L6-v2-int8" / "hippograph-model.json"
    tag = hashlib.sha256(marker.read_bytes() if marker.exists() else model_name.encode()).hexdigest()[:16]
    return root / f"shards-{tag}"


def shards(directory: Path) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(texts, vectors) of every finished shard, in order."""
    for path in sorted(directory.glob(_SHARDS)):
        with np.load(path) as data:
            yield data["texts"], data["vectors"]


def load(directory: Path) -> dict[str, np.ndarray]:
    """Every cached text's vector."""
    found: dict[str, np.ndarray] = {}
    for texts, vectors in shards(directory):
        found.update(zip(texts.tolist(), vectors, strict=True))
    return found


def add_shard(directory: Path, texts: Sequence[str], vectors: np.ndarray) -> None:
    """Write one more shard, whole or not at all."""
    directory.mkdir(parents=True, exist_ok=True)
    number = len(list(directory.glob(_SHARDS)))
    partial = directory / f"shard-{number:05d}.partial.npz"
    with partial.open("wb") as out:
        np.savez(out, texts=np.array(texts), vectors=vectors)
    os.replace(partial, directory / f"shard-{number:05d}.npz")


def fill(directory: Path, texts: Sequence[str], model: Any, log: Any = print) -> int:
    """Embed the distinct ``texts`` no shard holds yet, a shard at a time; returns how many."""
    known = set(load(directory))
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    started = time.perf_counter()
    for start in range(0, len(missing), SHARD_TEXTS):
        chunk = missing[start : start + SHARD_TEXTS]
        add_shard(directory, chunk, np.asarray(model.embed(chunk), dtype=np.float32))
        done = start + len(chunk)
        log(f"  cached {done:,}/{len(missing):,} vectors ({done / (time.perf_counter() - started):.0f}/s)")
    return len(missing)


def main() -> None:
    from bench.perf.build import DEFAULT_VECTOR_CACHE
    from bench.perf.bulk import index_texts
    from bench.perf.workload import corpus
    from hippograph.config import DEFAULT_MODEL
    from hippograph.store.embed import FastEmbedder

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--models-dir", type=Path, default=Path.home() / ".cache" / "hippograph" / "models")
    parser.add_argument("--vector-cache", type=Path, default=DEFAULT_VECTOR_CACHE)
    args = parser.parse_args()
    model = FastEmbedder(DEFAULT_MODEL, args.models_dir)
    directory = cache_dir(args.vector_cache, args.models_dir, model.name)
    texts = index_texts(corpus(args.facts, args.seed))
    print(f"filling {directory} for {args.facts:,} facts", flush=True)
    added = fill(directory, texts, model, log=lambda line: print(line, flush=True))
    print(f"done: {added:,} vectors embedded", flush=True)


if __name__ == "__main__":
    main()
