"""The ONNX Attention operator (opset 23) composed of graph ops.

    Y = softmax(softcap(Q·s @ (K·s)^T) + bias) @ V,   s = sqrt(scale)

with, in the order of onnx's reference (which wrote the conformance outputs):
- 3-D inputs [batch, seq, heads * head_size] reshaped and transposed to
  [batch, heads, seq, head_size] (`q_num_heads` / `kv_num_heads`), the output back;
- `past_key`/`past_value` concatenated before K/V on the sequence axis; the
  results are the `present_key`/`present_value` outputs;
- grouped-query attention: each K/V head repeated for q_num_heads / kv_num_heads
  consecutive query heads (an unsqueeze, a broadcast and a reshape);
- the bias: the float `attn_mask`, or a boolean one as where(mask, 0, -inf), padded
  with -inf up to the key length; `is_causal` adds the bottom-right causal bias
  (a constant: key j is visible to query i iff j <= i + past length);
- a query row whose bias is -inf everywhere gets probabilities 0 (a where on the
  row maximum of the bias), not the NaN of a softmax over -inf;
- `softcap` > 0: softcap * tanh(x / softcap) before the bias;
- `qk_matmul_output_mode` picks the fourth output: 0 (and 1) the (softcapped)
  scores, 2 the scores plus the bias, 3 the probabilities.

Everything is batched matmul, softmax and elementwise ops, so it fuses like any
other subgraph; no new kernel is needed.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i1
from xdsl.ir import SSAValue

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import Node, converter


def to_heads(node: Node, x: SSAValue, heads: int, what: str) -> SSAValue:
    """[batch, seq, heads * size] -> [batch, heads, seq, size]."""
    b, s, hidden = graph.shape_of(x.type)
    if heads <= 0 or hidden % heads:
        raise node.error(f"{what} hidden size {hidden} is not a multiple of {heads} heads")
    x = node.emit(graph.ReshapeOp, [x], shape=[b, s, heads, hidden // heads])
    return node.emit(graph.TransposeOp, [x], perm=[0, 2, 1, 3])


def repeat_heads(node: Node, x: SSAValue, reps: int) -> SSAValue:
    """[b, h, s, d] -> [b, h * reps, s, d], each head repeated `reps` times in a row."""
    if reps == 1:
        return x
    b, h, s, d = graph.shape_of(x.type)
    x = node.emit(graph.UnsqueezeOp, [x], axes=[2])
    x = node.emit(graph.BroadcastToOp, [x], shape=[b, h, reps, s, d])
    return node.emit(graph.ReshapeOp, [x], shape=[b, h * reps, s, d])


def mask_bias(node: Node, q_len: int, kv_len: int, past: int, causal: bool) -> SSAValue | np.ndarray | None:
    """The additive bias: the attention mask (bool -> 0/-inf, padded with -inf to
    the key length) plus the causal bias; an array when it is known at import."""
    bias = None
    if node.has_input(3):
        mask = node.raw(3)
        shape = node.shape(3)
        boolean = node.element_type(3) == i1
        if isinstance(mask, np.ndarray):
            bias = np.where(mask, 0.0, -np.inf).astype(np.float32) if boolean else mask.astype(np.float32)
        else:
            bias = mask
            if boolean:
                bias = node.emit(graph.WhereOp, [mask, node.constant(np.float32(0.0), "zero"),
                                                 node.constant(np.float32(-np.inf), "minus_inf")])
        pad = kv_len - shape[-1]
        if pad < 0:
            raise node.error(f"attn_mask of shape {shape} is longer than the {kv_len} keys")
        if pad:
            if isinstance(bias, np.ndarray):
                widths = [(0, 0)] * (bias.ndim - 1) + [(0, pad)]
                bias = np.pad(bias, widths, constant_values=-np.inf)
            else:
                fill = np.full((*shape[:-1], pad), -np.inf, np.float32)
                bias = node.emit(graph.ConcatOp, [bias, node.constant(fill, "mask_pad")], axis=len(shape) - 1)
    if causal:
        i = np.arange(q_len).reshape(q_len, 1)
        j = np.arange(kv_len).reshape(1, kv_len)
        causal_bias = np.where(j <= i + past, 0.0, -np.inf).astype(np.float32)
        if bias is None or isinstance(bias, np.ndarray):
            bias = causal_bias if bias is None else bias + causal_bias
        else:
            bias = node.emit(graph.AddOp, [bias, node.constant(causal_bias, "causal_bias")])
    return bias


@converter("Attention")
def convert_attention(node: Node):
    if node.has_input(6):
        raise node.error("the nonpad_kv_seqlen input is not supported")
    for i in range(3):
        if node.element_type(i) != f32:
            raise node.error(f"input {i} has element type {node.element_type(i)}; Attention supports float32")
    precision = node.attr("softmax_precision", None)
    if precision not in (None, 1):  # 1: FLOAT, what is computed anyway
        raise node.error(f"unsupported softmax_precision {precision} (float32 only)")
    rank = len(node.shape(0))
    if rank not in (3, 4) or len(node.shape(1)) != rank or len(node.shape(2)) != rank:
        raise node.error("Q, K and V must all be 3-D or all 4-D")
    q, k, v = node.input(0), node.input(1), node.input(2)
    if rank == 3:
        q_heads, kv_heads = node.attr("q_num_heads", None), node.attr("kv_num_heads", None)
        if q_heads is None or kv_heads is None:
            raise node.error("3-D inputs need the q_num_heads and kv_num_heads attributes")
        q = to_heads(node, q, int(q_heads), "Q")
        k = to_heads(node, k, int(kv_heads), "K")
        v = to_heads(node, v, int(kv_heads), "V")
    elif node.attr("q_num_heads", None) is not None or node.attr("kv_num_heads", None) is not None:
        raise node.error("q_num_heads and kv_num_heads are for 3-D inputs only")
    batch, q_heads, q_len, head_size = graph.shape_of(q.type)
    if node.has_input(4) != node.has_input(5):
        raise node.error("past_key and past_value must be given together")
    past = 0
    if node.has_input(4):
        past = node.shape(4)[2]
        k = node.emit(graph.ConcatOp, [node.input(4), k], axis=2)
        v = node.emit(graph.ConcatOp, [node.input(5), v], axis=2)
    present_k, present_v = k, v
    kv_heads, kv_len = graph.shape_of(k.type)[1], graph.shape_of(k.type)[2]
    if q_heads % kv_heads or graph.shape_of(v.type)[1] != kv_heads:
        raise node.error(f"{q_heads} query heads cannot share {kv_heads} key/value heads")
    k = repeat_heads(node, k, q_heads // kv_heads)
    v = repeat_heads(node, v, q_heads // kv_heads)

    scale = node.attr("scale", None)
    scale = 1 / np.sqrt(head_size) if scale is None else float(scale)
    root = float(np.float32(np.sqrt(scale)))
    qs = node.emit(graph.MulOp, [q, node.scalar(root, q)])
    ks = node.emit(graph.MulOp, [k, node.scalar(root, k)])
    scores = node.emit(graph.MatmulOp, [qs, node.emit(graph.TransposeOp, [ks], perm=[0, 1, 3, 2])])
    softcap = float(node.attr("softcap", 0.0))
    if softcap > 0:
        capped = node.emit(graph.TanhOp, [node.emit(graph.DivOp, [scores, node.scalar(softcap, scores)])])
        scores = node.emit(graph.MulOp, [capped, node.scalar(softcap, scores)])

    bias = mask_bias(node, q_len, kv_len, past, bool(node.attr("is_causal", 0)))
    biased = scores
    if bias is not None:
        bias_value = node.constant(bias, "attn_bias") if isinstance(bias, np.ndarray) else bias
        biased = node.emit(graph.AddOp, [scores, bias_value])
    probs = node.emit(graph.SoftmaxOp, [biased], axis=-1)
    if bias is not None:
        # Rows with no visible key: probabilities 0 rather than NaN.
        if isinstance(bias, np.ndarray):
            dead = np.isneginf(np.max(bias, axis=-1, keepdims=True))
            masked = node.constant(dead, "masked_rows") if dead.any() else None
        else:
            row_max = node.emit(graph.ReduceMaxOp, [bias], axes=[len(graph.shape_of(bias.type)) - 1], keepdims=True)
            masked = node.emit(graph.EqualOp, [row_max, node.scalar(-np.inf, row_max)])
        if masked is not None:
            probs = node.emit(graph.WhereOp, [masked, node.scalar(0.0, probs), probs])

    y = node.emit(graph.MatmulOp, [probs, v])
    if rank == 3:
        y = node.emit(graph.TransposeOp, [y], perm=[0, 2, 1, 3])
        y = node.emit(graph.ReshapeOp, [y], shape=[batch, q_len, q_heads * graph.shape_of(v.type)[3]])

    mode = int(node.attr("qk_matmul_output_mode", 0))
    if mode not in (0, 1, 2, 3):
        raise node.error(f"unsupported qk_matmul_output_mode {mode}")
    qk_output = {0: scores, 1: scores, 2: biased, 3: probs}[mode]
    return [y, present_k, present_v, qk_output]
