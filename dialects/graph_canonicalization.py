"""The canonicalization patterns of the graph dialect, run by xDSL's `canonicalize`.

Every graph op carries the `GraphCanonicalization` trait (dialects/graph/), which
asks `patterns_for(op type)` here for its patterns; `canonicalize` applies them
with the op folders (`dialects/graph_folders.py`) until nothing changes. What
they do is what an inference compiler does first to an exported model:

**Identities disappear** (`RemoveIdentity`): reshape/flatten/squeeze/unsqueeze/
broadcast_to that keep the type, an identity transpose, a cast to the same type,
all-zero pads, a full slice, a one-way split or concat, a clip without bounds, a
layout_transform to its own layout, and a graph.mul by a splat 1 or a
graph.add/sub of a splat 0 that does not change the other operand's type
(dropout, gone at inference, leaves such ops behind in exported models).

**batch_norm** with known parameters (constants, or weights of the module's
store) is a per-channel affine map, `y = x * a + b` with
`a = scale / sqrt(var + eps)` and `b = bias - mean * a`. It is

1. folded into the conv2d (NCHW/OIHW) or 2-D dense that produces `x`
   (`FoldBatchNormIntoProducer`), when that op has no other user and its weight
   (and bias) are known: the weight is scaled per output channel (`w[o] * a[o]`),
   the bias becomes `bias * a + b` (created when absent);
2. otherwise a `graph.mul` by `a` and a `graph.add` of `b`, both shaped
   `[C, 1, ..., 1]` to broadcast along the channel axis (`BatchNormToScaleShift`);
3. with unknown parameters (function arguments), the same mul/add with `a` and
   `b` computed by graph ops (`BatchNormToArithmetic`).

**conv2d windows larger than their input** lose the kernel taps that read only
padding for every output position (`TrimConvWindow`): a 3x3 conv with padding 1
on a 1x1 input becomes the 1x1 conv of its centre tap, as the last stages of a CNN
on small images have them.

Arrays the patterns make go into the module's weight store when they are large
(`graph_values.value_op`), named after the weight they came from.

```mlir
%y = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
%z = graph.batch_norm %y, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : (...) -> tensor<1x4x6x6xf32>
```
becomes
```mlir
%w2 = graph.weight "conv.weight.bn" : tensor<4x3x3x3xf32>
%b2 = graph.constant dense<[...]> : tensor<4xf32>
%z = graph.conv2d %x, %w2, %b2 : (...) -> tensor<1x4x6x6xf32>
```
"""

from __future__ import annotations

from functools import cache

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tilecraft.dialects.graph_reference import constant_value
from tilecraft.dialects import graph
from tilecraft.dialects.graph_values import known_value, store_near, value_op

NAME = "canonicalize"

# -- identities ----------------------------------------------------------------------


def _splat(value: SSAValue) -> float | None:
    owner = value.owner
    if isinstance(owner, graph.ConstantOp) and owner.value.is_splat():
        return float(constant_value(owner).reshape(-1)[0])
    return None


def _moves_nothing(op: graph.GraphOp, x: SSAValue) -> bool:
    """For a data-movement op whose result has its operand's type: whether its
    attributes say it leaves every element where it is."""
    match op:
        case graph.TransposeOp():
            rank = len(graph.shape_of(x.type))
            return op.permutation(rank) == list(range(rank))
        case graph.SliceOp():
            return all(st == 1 for _, _, st in op.ranges(graph.shape_of(x.type)))
        case graph.PadOp():
            return not any(op.pads)
        case graph.LayoutTransformOp():
            return op.src == op.dst
        case _:  # a split into one piece
            return True


def identity_operand(op: Operation) -> SSAValue | None:
    """The operand `op` returns unchanged, if it is an identity."""
    if not isinstance(op, graph.GraphOp) or len(op.outputs) != 1 or not op.inputs:
        return None
    out = op.outputs[0]
    x = op.inputs[0]
    same = x.type == out.type
    match op:
        case graph.ReshapeOp() | graph.FlattenOp() | graph.SqueezeOp() | graph.UnsqueezeOp() | graph.CastOp():
            return x if same else None
        case graph.BroadcastToOp():
            return x if same else None
        case graph.TransposeOp() | graph.SliceOp() | graph.PadOp() | graph.SplitOp() | graph.LayoutTransformOp():
            return x if same and _moves_nothing(op, x) else None
        case graph.ConcatOp():
            return x if len(op.inputs) == 1 else None
        case graph.ClipOp():
            return x if op.min is None and op.max is None else None
        case graph.MulOp() | graph.AddOp() | graph.SubOp():
            neutral = 1.0 if isinstance(op, graph.MulOp) else 0.0
            lhs, rhs = op.lhs, op.rhs
            if _splat(rhs) == neutral and lhs.type == out.type:
                return lhs
            if not isinstance(op, graph.SubOp) and _splat(lhs) == neutral and rhs.type == out.type:
                return rhs
    return None


class RemoveIdentity(RewritePattern):
    """An op that returns its operand unchanged is replaced by that operand:
    `%r = graph.reshape %x {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>`
    goes, and `%r`'s users read `%x`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        x = identity_operand(op)
        if x is not None:
            rewriter.replace(op, [], [x])


# -- batch_norm --------------------------------------------------------------------------


def _hint(value: SSAValue, suffix: str) -> str:
    owner = value.owner
    base = owner.weight_name.data if isinstance(owner, graph.WeightOp) else "bn"
    return f"{base}.{suffix}"


def _only_user(value: SSAValue, op: Operation) -> bool:
    uses = list(value.uses)
    return len(uses) == 1 and uses[0].operation is op


def _erase_dead(values: list[SSAValue], rewriter: PatternRewriter) -> None:
    """Erase the constants and weights among `values` that nothing reads any more."""
    for owner in dict.fromkeys(v.owner for v in values):
        if isinstance(owner, (graph.ConstantOp, graph.WeightOp)) and owner.parent and not owner.results[0].uses:
            rewriter.erase(owner)


def scale_shift(bn: graph.BatchNormOp) -> tuple[np.ndarray, np.ndarray] | None:
    """(a, b) of `y = x * a + b` when every parameter of `bn` is known, else None."""
    if not all(isinstance(v.owner, (graph.ConstantOp, graph.WeightOp)) for v in bn.parameters()):
        return None
    store = store_near(bn, NAME)
    params = [known_value(v, store, NAME) for v in bn.parameters()]
    if any(p is None for p in params):
        return None
    scale, bias, mean, var = (p.astype(np.float64) for p in params)
    a = scale / np.sqrt(var + bn.epsilon)
    b = bias - mean * a
    dtype = params[0].dtype
    return a.astype(dtype), b.astype(dtype)


def _name(op: Operation, hint: str) -> None:
    """Name a new value after what it holds (the rewriter would name it after the
    value it replaces)."""
    op.results[0].name_hint = hint


def _channel_shape(x: SSAValue, c: int) -> list[int]:
    return [c] + [1] * (len(graph.shape_of(x.type)) - 2)


class FoldBatchNormIntoProducer(RewritePattern):
    """batch_norm of a conv2d/dense result that feeds nothing else, with known
    parameters, weight and bias: the producer's weight and bias absorb it.

    `%y = graph.conv2d %x, %w` + `%z = graph.batch_norm %y, %s, %b, %m, %v` becomes
    `%z = graph.conv2d %x, %w2, %b2` with `w2 = w * a` per output channel and
    `b2 = bias * a + b`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, bn: graph.BatchNormOp, rewriter: PatternRewriter, /) -> None:
        x = bn.inputs[0]
        producer = x.owner
        if not isinstance(producer, (graph.Conv2dOp, graph.DenseOp)) or not _only_user(x, bn):
            return
        if isinstance(producer, graph.Conv2dOp):
            if producer.layouts() != (0, (0, 0), 0):
                return  # blocked convs take no bias (alter-layout runs after this)
        elif len(graph.shape_of(x.type)) != 2:
            return  # batch_norm's channel axis is the dense's output axis only in 2-D
        elif producer.weight_layout != graph.WeightLayout.NK:
            return  # the scaling below is per row of an [N, K] weight
        weight, bias = producer.weight, producer.bias
        if not all(isinstance(v.owner, (graph.ConstantOp, graph.WeightOp)) for v in graph.present(weight, bias)):
            return
        affine = scale_shift(bn)
        if affine is None:
            return
        a, b = affine
        store = store_near(bn, NAME)
        w = known_value(weight, store, NAME)
        b0 = known_value(bias, store, NAME) if bias is not None else np.zeros_like(a)
        if w is None or b0 is None:
            return
        new_w = (w * a.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
        new_b = (b0 * a + b).astype(w.dtype)
        b_type = TensorType(bn.scale.type.get_element_type(), [len(a)])
        w_op = value_op(new_w, weight.type, store, _hint(weight, "bn"))
        b_op = value_op(new_b, b_type, store, _hint(weight, "bn_bias"))
        _name(w_op, weight.name_hint or "weight")
        _name(b_op, "bias")
        new = producer.with_properties([producer.input, w_op.results[0], b_op.results[0]])
        old_params = [*graph.present(weight, bias), *bn.parameters()]
        rewriter.replace(producer, [w_op, b_op, new], [new.outputs[0]])
        rewriter.replace(bn, [], [new.outputs[0]])
        _erase_dead(old_params, rewriter)


class BatchNormToScaleShift(RewritePattern):
    """batch_norm with known parameters: `graph.mul` by `a` and `graph.add` of `b`,
    constants (or weights) of shape [C, 1, ..., 1]."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, bn: graph.BatchNormOp, rewriter: PatternRewriter, /) -> None:
        affine = scale_shift(bn)
        if affine is None:
            return
        a, b = affine
        store = store_near(bn, NAME)
        x = bn.input
        shape = _channel_shape(x, len(a))
        element = x.type.get_element_type()
        a_op = value_op(a.reshape(shape), TensorType(element, shape), store, _hint(bn.scale, "bn_scale"))
        b_op = value_op(b.reshape(shape), TensorType(element, shape), store, _hint(bn.bias, "bn_shift"))
        _name(a_op, "scale")
        _name(b_op, "shift")
        mul = graph.MulOp([x, a_op.results[0]])
        add = graph.AddOp([mul.outputs[0], b_op.results[0]])
        params = list(bn.parameters())
        rewriter.replace(bn, [a_op, b_op, mul, add], [add.outputs[0]])
        _erase_dead(params, rewriter)


class BatchNormToArithmetic(RewritePattern):
    """batch_norm whose parameters are not known: `a` and `b` computed by graph ops
    (add eps, sqrt, div, mul, sub), reshaped to [C, 1, ..., 1], then mul and add."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, bn: graph.BatchNormOp, rewriter: PatternRewriter, /) -> None:
        if not all(isinstance(v.type, TensorType) for v in (*bn.inputs, bn.outputs[0])):
            return  # shapes not inferred yet
        x, scale, bias, mean, var = bn.inputs
        c = graph.shape_of(scale.type)[0]
        eps_value = np.full(c, bn.epsilon, dtype=np.float32)
        eps = graph.ConstantOp(DenseIntOrFPElementsAttr.from_list(scale.type, eps_value.tolist()))
        add_eps = graph.AddOp([var, eps.results[0]])
        root = graph.SqrtOp([add_eps.outputs[0]])
        a = graph.DivOp([scale, root.outputs[0]])
        ma = graph.MulOp([mean, a.outputs[0]])
        b = graph.SubOp([bias, ma.outputs[0]])
        shape = {"shape": _channel_shape(x, c)}
        a_r = graph.ReshapeOp([a.outputs[0]], shape)
        b_r = graph.ReshapeOp([b.outputs[0]], shape)
        mul = graph.MulOp([x, a_r.outputs[0]])
        add = graph.AddOp([mul.outputs[0], b_r.outputs[0]])
        ops = [eps, add_eps, root, a, ma, b, a_r, b_r, mul, add]
        rewriter.replace(bn, ops, [add.outputs[0]])


# -- conv2d windows ------------------------------------------------------------------


def _live_taps(size: int, out: int, kernel: int, stride: int, dilation: int, pad: int) -> tuple[int, int] | None:
    """The first and last kernel tap along one spatial axis that reads the input for
    some output position (the others read only padding), or None when none does."""
    live = [
        r for r in range(kernel)
        if any(0 <= o * stride + r * dilation - pad < size for o in range(out))
    ]  # fmt: skip
    return (live[0], live[-1]) if live else None


class TrimConvWindow(RewritePattern):
    """A conv2d (unblocked, direct) whose outer kernel taps read only padding for
    every output position: the weight is cut to the taps that read the input, and
    the padding with it, so nothing multiplies padded zeros.

    A 3x3 conv with padding 1 on a 1x1 input is a 1x1 conv: ResNet-18 at 32x32
    reaches 1x1 in its last stage, where 8/9 of each weight multiplied zeros (and
    had to be read from memory). Per axis, taps [r0, r1] are kept: the begin pad
    becomes `pad - r0 * dilation` and the end pad whatever keeps the output size;
    an axis where that would be negative is left alone. A constant or stored
    weight is cut here (a batch_norm can still fold into it); any other weight (a
    1-D conv's unsqueezed one, an argument) through a `graph.slice`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, conv: graph.Conv2dOp, rewriter: PatternRewriter, /) -> None:
        if conv.algorithm != "direct" or conv.layouts() != (0, (0, 0), 0):
            return
        x, w = conv.input, conv.weight
        if not all(isinstance(v.type, TensorType) for v in (x, w, conv.outputs[0])):
            return  # shapes not inferred yet
        sizes, kernel = graph.shape_of(x.type)[2:], graph.shape_of(w.type)[2:]
        outs = graph.shape_of(conv.outputs[0].type)[2:]
        if not all(isinstance(n, int) for n in (*sizes, *outs)):
            return  # (an image size known only when it runs: every tap may read it)
        rank = len(sizes)
        strides, dilations, pads = list(conv.strides), list(conv.dilations), list(conv.pads)
        begin, end, cuts = pads[:rank], pads[rank:], []
        for axis in range(rank):
            taps = _live_taps(sizes[axis], outs[axis], kernel[axis], strides[axis], dilations[axis], begin[axis])
            if taps is None or taps == (0, kernel[axis] - 1):
                cuts.append((0, kernel[axis]))
                continue
            r0, r1 = taps
            lo = begin[axis] - r0 * dilations[axis]
            hi = (outs[axis] - 1) * strides[axis] + (r1 - r0) * dilations[axis] + 1 - sizes[axis] - lo
            if lo < 0 or hi < 0:
                cuts.append((0, kernel[axis]))
                continue
            begin[axis], end[axis] = lo, hi
            cuts.append((r0, r1 + 1))
        if all(cut == (0, k) for cut, k in zip(cuts, kernel)):
            return
        store = store_near(conv, NAME)
        array = known_value(w, store, NAME)
        if array is not None:  # (a new constant: batch_norm folds into it still)
            trimmed = np.ascontiguousarray(array[(slice(None), slice(None), *(slice(a, b) for a, b in cuts))])
            w_type = TensorType(w.type.get_element_type(), list(trimmed.shape))
            w_op = value_op(trimmed, w_type, store, _hint(w, "trimmed"))
        else:  # (computed, an argument: fold-constants folds what it can)
            axes = list(range(2, 2 + rank))
            w_op = graph.SliceOp([w], {"starts": [a for a, _ in cuts], "ends": [b for _, b in cuts], "axes": axes})
        _name(w_op, w.name_hint or "weight")
        pads = begin + end
        new = conv.with_properties([x, w_op.results[0], *graph.present(conv.bias)], pads=pads if any(pads) else None)
        rewriter.replace(conv, [w_op, new], [new.outputs[0]])
        _erase_dead([w], rewriter)


# -- the table the dialect's trait reads ---------------------------------------------------

_IDENTITY_CANDIDATES = (
    graph.ReshapeOp, graph.FlattenOp, graph.SqueezeOp, graph.UnsqueezeOp, graph.CastOp, graph.BroadcastToOp,
    graph.TransposeOp, graph.SliceOp, graph.PadOp, graph.SplitOp, graph.LayoutTransformOp, graph.ConcatOp,
    graph.ClipOp, graph.MulOp, graph.AddOp, graph.SubOp,
)  # fmt: skip


@cache
def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns of one graph op kind, in the order tried."""
    if issubclass(op_type, graph.BatchNormOp):
        return (FoldBatchNormIntoProducer(), BatchNormToScaleShift(), BatchNormToArithmetic())
    if issubclass(op_type, _IDENTITY_CANDIDATES):
        return (RemoveIdentity(),)
    if issubclass(op_type, graph.Conv2dOp):
        return (TrimConvWindow(),)
    return ()


def all_patterns() -> tuple[RewritePattern, ...]:
    return (RemoveIdentity(), FoldBatchNormIntoProducer(), BatchNormToScaleShift(), BatchNormToArithmetic(),
            TrimConvWindow())  # fmt: skip
