"""Keep the default model's int8 weights int8 in memory: same vectors, a quarter of the RAM.

The shipped all-MiniLM-L6-v2 int8 file stores each weight matrix as int8 with one float scale
per output column (``MatMul(x, Cast(W_q) * scale)``), and each embedding table as int8 with
one scale per row (``Gather(Cast(T_q) * scale, ids)``). onnxruntime's constant folding turns
every such weight back into float32 when the session opens: ~155 MB of RAM for a 23 MB file.

This rewrite, done once when the model directory is assembled, expresses the same arithmetic
with operators that take the int8 data as it is:

- a weight matrix becomes ``MatMulNBits`` (8 bits, blocks of 128 along K, zero point 128,
  every block of a column carrying that column's scale), which dequantizes block by block
  inside the product (``accuracy_level`` 0: float32 arithmetic);
- an embedding table is gathered as int8 and scaled after the lookup:
  ``Gather(T_q, ids) * Gather(scale, ids)``.

Outputs match the shipped model's to ~1e-7 (tests/test_embed_model.py holds them to 1e-4).
A session then holds ~40 MB; embedding one short text costs ~1.3x on 2 cores, a batch the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

# Block length along K. 128 divides both of the model's K (384, 1536); measured a little faster
# than 32 for one text and equal for batches.
_BLOCK = 128
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
                numpy_helper.from_array(np.full(n * blocks, _ZERO, np.uint8), f"{q_name}.zero"),
            ]
            rewritten.append(
                helper.make_node(
                    "MatMulNBits",
                    [node.input[0], f"{q_name}.nbits", f"{scale_name}.nbits", f"{q_name}.zero"],
                    list(node.output),
                    domain="com.microsoft",
                    K=k,
                    N=n,
                    bits=8,
                    block_size=_BLOCK,
                    accuracy_level=0,
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
