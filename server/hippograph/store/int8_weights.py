"""Keep the default model's int8 weights int8 in memory, and multiply in int8: a quarter of the
RAM, and one text embedded in a fifth of the time.

The shipped all-MiniLM-L6-v2 int8 file stores each weight matrix as int8 with one float scale
per output column (``MatMul(x, Cast(W_q) * scale)``), and each embedding table as int8 with
one scale per row (``Gather(Cast(T_q) * scale, ids)``). onnxruntime's constant folding turns
every such weight back into float32 when the session opens: ~155 MB of RAM for a 23 MB file.

This rewrite, done once when the model directory is assembled, expresses the same weights
with operators that take the int8 data as it is:

- a weight matrix becomes ``MatMulNBits`` (8 bits, blocks of 16 along K, the default zero
  point 128, every block of a column carrying that column's scale) with ``accuracy_level`` 4:
  the activations are quantized to int8 per block of 16 and multiplied with integer kernels;
- an embedding table is gathered as int8 and scaled after the lookup:
  ``Gather(T_q, ids) * Gather(scale, ids)``.

Measured on 2 cores (2026-11-27, onnxruntime 1.32): a session holds ~40 MB (155 with the
shipped file); one short text takes ~2-4 ms (shipped ~4-6; float arithmetic inside
``MatMulNBits``, ``accuracy_level`` 0, dequantized every weight on every run: ~17-21 ms); a
batch costs ~10 ms a text (shipped and level 0 ~7.5). Sentence vectors keep a cosine of at
least 0.9997 with the shipped file's (0.9996 with blocks of 32, 0.9993 with 64; level 0 was
exact): tests/test_embed_model.py holds them to 0.9995.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

# Block length along K (divides both of the model's K, 384 and 1536): the activations' int8
# scale is per block, so shorter blocks keep the vectors nearer the shipped file's, at no cost.
_BLOCK = 16
_ZERO = 128  # int8 value v is stored as the uint8 v + 128


def keep_weights_int8(source: Path, target: Path) -> None:
    """Write ``source``'s model to ``target`` with its int8 weights kept int8 (see module doc)."""
    import onnx  # only needed once, when the model directory is assembled
    from onnx import helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    stored = {tensor.name: tensor for tensor in graph.initializer}
    made_by = {output: node for node in graph.node for output in node.output}

    def int8_weight(name: str) -> tuple[str, str] | None:
        """For a value computed as Cast(int8 initializer) * scale initializer: (the int8
        initializer's name, the scale's name)."""
        scaling = made_by.get(name)
        if scaling is None or scaling.op_type != "Mul":
            return None
        cast = made_by.get(scaling.input[0])
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in stored:
            return None
        if scaling.input[1] not in stored:
            return None
        return cast.input[0], scaling.input[1]

    rewritten: list[Any] = []
    added: list[Any] = []
    for node in graph.node:
        if node.op_type == "MatMul" and (found := int8_weight(node.input[1])):
            q_name, scale_name = found
            q = numpy_helper.to_array(stored[q_name])
            scale = numpy_helper.to_array(stored[scale_name]).reshape(-1).astype(np.float32)
            k, n = q.shape
            blocks = -(-k // _BLOCK)
            columns = (q.T.astype(np.int16) + _ZERO).astype(np.uint8)
            columns = np.pad(columns, ((0, 0), (0, blocks * _BLOCK - k)), constant_values=_ZERO)
            added += [
                numpy_helper.from_array(columns.reshape(n, blocks, _BLOCK), f"{q_name}.nbits"),
                numpy_helper.from_array(np.repeat(scale, blocks), f"{scale_name}.nbits"),
            ]
            rewritten.append(
                helper.make_node(
                    "MatMulNBits",
                    [node.input[0], f"{q_name}.nbits", f"{scale_name}.nbits"],
                    list(node.output),
                    domain="com.microsoft",
                    K=k,
                    N=n,
                    bits=8,
                    block_size=_BLOCK,
                    accuracy_level=4,
                )
            )
        elif node.op_type == "Gather" and (found := int8_weight(node.input[0])):
            q_name, scale_name = found
            out, ids = node.output[0], node.input[1]
            rewritten += [
                helper.make_node("Gather", [q_name, ids], [f"{out}.q"], axis=0),
                helper.make_node("Cast", [f"{out}.q"], [f"{out}.f"], to=onnx.TensorProto.FLOAT),
                helper.make_node("Gather", [scale_name, ids], [f"{out}.scale"], axis=0),
                helper.make_node("Mul", [f"{out}.f", f"{out}.scale"], [out]),
            ]
        else:
            rewritten.append(node)

    # Drop what nothing reads any more: the Cast/Mul pairs and the original int8 initializers.
    while True:
        read = {name for node in rewritten for name in node.input} | {o.name for o in graph.output}
        kept = [node for node in rewritten if any(output in read for output in node.output)]
        if len(kept) == len(rewritten):
            break
        rewritten = kept
    read = {name for node in rewritten for name in node.input}
    initializers = [t for t in [*graph.initializer, *added] if t.name in read]
    del graph.node[:]
    graph.node.extend(rewritten)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    if not any(opset.domain == "com.microsoft" for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(target))
