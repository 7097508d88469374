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
  (a constant: key j is visible to query i iff j <= i + past length), the sliding
  window (`left_window_size`, `right_window_size`) likewise; with
  `nonpad_kv_seqlen` n[b] the offset is n[b] - q_len per batch and keys from n[b]
  on are masked (comparisons computed at run time);
- a query row whose bias is -inf everywhere gets probabilities 0 (a where on the
  row maximum of the bias), not the NaN of a softmax over -inf;
- `softcap` > 0: softcap * tanh(x / softcap) before the bias;
- `qk_matmul_output_mode` picks the fourth output: 0 (and 1) the (softcapped)
  scores, 2 the scores plus the bias, 3 the probabilities.

Everything is batched matmul, softmax and elementwise ops, so it fuses like any
other subgraph; no new kernel is needed.

On bfloat16 (or another narrow float type) the inputs are widened exactly to
float32 and everything here computes in float32; only the node's results are
rounded (the importer's NARROW handling), so the output is the correctly
rounded result. onnx's reference computes on bfloat16 numpy arrays, rounding
each intermediate, and differs from that by one or two bfloat16 ulps in about a
quarter of the conformance outputs (which accept two ulps).
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


class Bias:
    """An additive attention bias being built: a part known at import (numpy) plus
    parts computed at run time (SSA values), all broadcast against [b, h, q, kv]."""

    def __init__(self, node: Node):
        self.node = node
        self.known: np.ndarray | None = None
        self.computed: list[SSAValue] = []

    def add(self, part: SSAValue | np.ndarray) -> None:
        if isinstance(part, np.ndarray):
            self.known = part if self.known is None else self.known + part
        else:
            self.computed.append(part)

    def add_masked(self, masked: SSAValue) -> None:
        """-inf where `masked` (i1) holds, 0 elsewhere."""
        node = self.node
        self.add(node.emit(graph.WhereOp, [masked, node.constant(np.float32(-np.inf), "minus_inf"),
                                           node.constant(np.float32(0.0), "zero")]))

    def value(self) -> SSAValue | np.ndarray | None:
        parts = self.computed + ([] if self.known is None else [self.node.constant(self.known, "attn_bias")])
        if not self.computed:
            return self.known
        total = parts[0]
        for part in parts[1:]:
            total = self.node.emit(graph.AddOp, [total, part])
        return total


def mask_bias(node: Node, q_len: int, kv_len: int, past: int, causal: bool) -> SSAValue | np.ndarray | None:
    """The additive bias: the attention mask (bool -> 0/-inf, padded with -inf to
    the key length), the causal and sliding-window biases (key j visible to query i
    iff j <= i + offset, and within the window around i + offset; the offset is the
    past length, or per batch nonpad_kv_seqlen - q_len), and the padding of keys
    past nonpad_kv_seqlen; an array when all of it is known at import."""
    bias = Bias(node)
    if node.has_input(3):
        mask = node.raw(3)
        shape = node.shape(3)
        boolean = node.element_type(3) == i1
        if isinstance(mask, np.ndarray):
            mask_part = np.where(mask, 0.0, -np.inf).astype(np.float32) if boolean else mask.astype(np.float32)
        elif boolean:
            mask_part = node.emit(graph.WhereOp, [mask, node.constant(np.float32(0.0), "zero"),
                                                  node.constant(np.float32(-np.inf), "minus_inf")])
        else:
            mask_part = mask
        pad = kv_len - shape[-1]
        if pad < 0:
            raise node.error(f"attn_mask of shape {shape} is longer than the {kv_len} keys")
        if pad:
            if isinstance(mask_part, np.ndarray):
                mask_part = np.pad(mask_part, [(0, 0)] * (len(shape) - 1) + [(0, pad)], constant_values=-np.inf)
            else:
                fill = np.full((*shape[:-1], pad), -np.inf, np.float32)
                mask_part = node.emit(graph.ConcatOp, [mask_part, node.constant(fill, "mask_pad")], axis=len(shape) - 1)
        bias.add(mask_part)

    left = int(node.attr("left_window_size", -1))
    right = int(node.attr("right_window_size", -1))
    if left < -1 or right < -1:
        raise node.error(f"window sizes must be -1 or nonnegative, got {left} and {right}")
    i = np.arange(q_len).reshape(q_len, 1)
    j = np.arange(kv_len).reshape(1, kv_len)
    if not node.has_input(6):
        diff = i + past - j  # query position minus key position
        allowed = np.ones((q_len, kv_len), bool)
        if causal:
            allowed &= diff >= 0
        if left >= 0:
            allowed &= diff <= left
        if right >= 0:
            allowed &= -diff <= right
        if not allowed.all():
            bias.add(np.where(allowed, 0.0, -np.inf).astype(np.float32))
        return bias.value()

    # nonpad_kv_seqlen n[b]: keys from n[b] on are padding; offset n[b] - q_len.
    if node.shape(6) != (graph.shape_of(node.input(0).type)[0],):
        raise node.error(f"nonpad_kv_seqlen of shape {node.shape(6)} must have one length per batch")
    n = node.input(6)
    dtype = np.int32 if str(node.element_type(6)) == "i32" else np.int64
    n = node.emit(graph.ReshapeOp, [n], shape=[node.shape(6)[0], 1, 1, 1])
    rel = (i - j - q_len).astype(dtype)  # diff = rel + n[b]

    def less(a, b):
        a = node.constant(a, "window_bound") if isinstance(a, np.ndarray) else a
        b = node.constant(b, "window_bound") if isinstance(b, np.ndarray) else b
        return node.emit(graph.LessOp, [a, b])

    bias.add_masked(less(n, (j + 1).astype(dtype)))  # padding: n[b] <= j
    if causal:
        bias.add_masked(less(n, -rel))  # rel + n[b] < 0
    if left >= 0:
        bias.add_masked(less(left - rel, n))  # rel + n[b] > left
    if right >= 0:
        bias.add_masked(less(n, -rel - right))  # -(rel + n[b]) > right
    return bias.value()


@converter("Attention")
def convert_attention(node: Node):
    if node.has_input(6) and node.has_input(4):
        raise node.error("nonpad_kv_seqlen cannot be combined with past_key/past_value")
    for i in range(3):
        if node.element_type(i) != f32:
            raise node.error(f"input {i} has element type {node.element_type(i)}; Attention supports float32")
    precision = node.attr("softmax_precision", None)
    if precision not in (None, 1, 11):
        # float (1) is what is computed; double (11) asks for at least that much
        # precision, which the conformance tolerances of float32 outputs accept.
        raise node.error(f"unsupported softmax_precision {precision} (float or double)")
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
