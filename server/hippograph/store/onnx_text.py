"""The default embedding model, run with onnxruntime and tokenizers directly.

fastembed runs any other model. For the default one, assembled here (``embed``), it would only
read the same two files and do what this module does: tokenize (truncated at the model's input
length, padded to the batch's longest text), run the session, average the token states under
the attention mask (``FastEmbedder`` scales every model's vectors to unit length). Running it
directly saves importing fastembed (~0.45 s of a cold start, ~20 MB) and lets the session be
set up as a server needs:

- no memory arena: it keeps the largest batch's activations for good (~120 MB after one
  remember_many); one text embeds as fast without it;
- its threads sleep between runs instead of spinning: on 2 cores, embedding a text every
  few ms cost ~1.6x the CPU with spinning, at the same latency, CPU that the stores and other
  processes (a test run's other worker) then lack.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

_MAX_TOKENS = 256  # all-MiniLM-L6-v2's input length
_PAD = "[PAD]"


class OnnxTextModel:
    """A sentence-transformers model as ONNX (token states out), mean-pooled (the embedder makes
    each vector unit length, for every model)."""

    def __init__(self, directory: Path) -> None:
        import onnxruntime as ort  # with the model, not with this module

        options = ort.SessionOptions()
        options.enable_cpu_mem_arena = False
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(directory / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {node.name for node in self._session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        pad_id = self.tokenizer.token_to_id(_PAD)
        if pad_id is None:
            raise ValueError(f"{directory / 'tokenizer.json'} has no {_PAD} token")
        self.tokenizer.enable_padding(pad_id=pad_id, pad_token=_PAD)

    def embed(self, texts: Sequence[str], batch_size: int) -> Iterator[np.ndarray]:
        """One float32 vector per text, in order, ``batch_size`` texts a run."""
        for start in range(0, len(texts), batch_size):
            encoded = self.tokenizer.encode_batch(list(texts[start : start + batch_size]))
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            states = self._session.run(None, feed)[0]
            weights = mask[..., None].astype(np.float64)
            pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            yield from pooled.astype(np.float32)
