"""A benchmark's memory: the service as a client would use it, real stores in a temporary data dir."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hippograph.config import DEFAULT_MODEL, Settings
from hippograph.service.memory import Memory
from hippograph.store.embed import FastEmbedder, assemble_default_model

MODELS_DIR = Path(tempfile.gettempdir()) / "hippograph-bench" / "models"


def add_models_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--models-dir", type=Path, default=MODELS_DIR)


@contextmanager
def temporary_memory(models_dir: Path) -> Iterator[Memory]:
    """A memory over a fresh temporary data dir with the default model, closed and removed after."""
    models_dir.mkdir(parents=True, exist_ok=True)
    assemble_default_model(models_dir)
    embedder = FastEmbedder(DEFAULT_MODEL, models_dir)
    with tempfile.TemporaryDirectory() as data_dir:
        memory = Memory.open(Settings(data_dir=Path(data_dir), models_dir=models_dir), embedder=embedder)
        try:
            yield memory
        finally:
            memory.close()
