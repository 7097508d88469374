"""simplify-inference: rewrite training-time ops into the arithmetic inference needs.

**batch_norm** with known parameters (constants, or weights from the module's
store) is a per-channel affine map, `y = x * a + b` with
`a = scale / sqrt(var + eps)` and `b = bias - mean * a`. It becomes:

1. folded into the conv2d (NCHW/OIHW) or the 2-D dense that produces `x`, when
   that op has no other user and its weight (and bias) are known: the weight is
   scaled per output channel (`w[o] * a[o]`) and the bias becomes
   `bias * a + b` (created when absent); the batch_norm disappears;
2. otherwise a `graph.mul` by `a` and a `graph.add` of `b`, both reshaped to
   `[C, 1, ..., 1]` so they broadcast along the channel axis (axis 1).

With unknown parameters (function arguments) it becomes the same mul/add with
`a` and `b` computed by graph ops, which fold-constants may fold later.

**Identities** disappear: reshape/flatten/squeeze/unsqueeze/broadcast_to that
keep the type, an identity transpose, a cast to the same type, all-zero pads, a
full slice, a one-way split or concat, a clip without bounds, a layout_transform
to its own layout, and a graph.mul by a splat 1 or a graph.add/sub of a splat 0
that does not change the other operand's type (dropout, gone at inference,
leaves such ops behind in exported models).

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

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tilecraft.backends.graph_reference import constant_value
from tilecraft.dialects import graph
from tilecraft.transforms.fold_constants import known_value, value_op
from tilecraft.utils.weights import WeightStore, pass_store


NAME = "simplify-inference"


def erase_if_dead(values: list[SSAValue]) -> None:
    """Erase the constants and weights among `values` that nothing uses any more."""
    for v in values:
        owner = v.owner
        if isinstance(owner, (graph.ConstantOp, graph.WeightOp)) and owner.parent and not v.uses:
            Rewriter.erase_op(owner)


def _hint(value: SSAValue, suffix: str) -> str:
    owner = value.owner
    base = owner.weight_name.data if isinstance(owner, graph.WeightOp) else "bn"
    return f"{base}.{suffix}"


def _only_user(value: SSAValue, op: Operation) -> bool:
    uses = list(value.uses)
    return len(uses) == 1 and uses[0].operation is op


def _fold_into_producer(bn: graph.BatchNormOp, a: np.ndarray, b: np.ndarray, store: WeightStore | None) -> bool:
    """Scale the weight and bias of the conv2d/dense feeding `bn`; False if not legal."""
    x = bn.inputs[0]
    producer = x.owner
    if not isinstance(producer, (graph.Conv2dOp, graph.DenseOp)) or not _only_user(x, bn):
        return False
    if isinstance(producer, graph.Conv2dOp):
        if producer.layouts() != (0, (0, 0), 0):
            return False  # blocked convs take no bias; alter-layout runs after this pass
    elif len(graph.shape_of(x.type)) != 2:
        return False  # batch_norm's channel axis is the dense's output axis only in 2-D
    elif producer.weight_layout != graph.WeightLayout.NK:
        return False  # the scaling below is per row of an [N, K] weight
    w = known_value(producer.inputs[1], store, NAME)
    bias = known_value(producer.inputs[2], store, NAME) if len(producer.inputs) == 3 else np.zeros_like(a)
    if w is None or bias is None:
        return False
    new_w = (w * a.reshape((-1,) + (1,) * (w.ndim - 1))).astype(w.dtype)
    new_b = (bias * a + b).astype(w.dtype)
    w_type, b_type = producer.inputs[1].type, TensorType(bn.inputs[1].type.get_element_type(), [len(a)])
    w_op = value_op(new_w, w_type, store, _hint(producer.inputs[1], "bn"))
    b_op = value_op(new_b, b_type, store, _hint(producer.inputs[1], "bn_bias"))
    new = producer.with_properties([producer.inputs[0], w_op.results[0], b_op.results[0]])
    Rewriter.insert_op([w_op, b_op], InsertPoint.before(producer))
    old_params = list(producer.inputs[1:]) + list(bn.inputs[1:])
    Rewriter.replace_op(producer, new)
    Rewriter.replace_op(bn, [], [new.outputs[0]])
    erase_if_dead(old_params)
    return True


def _channel_shape(x: SSAValue, c: int) -> list[int]:
    return [c] + [1] * (len(graph.shape_of(x.type)) - 2)


def _affine_known(bn: graph.BatchNormOp, a: np.ndarray, b: np.ndarray, store: WeightStore | None) -> None:
    x = bn.inputs[0]
    shape = _channel_shape(x, len(a))
    element = x.type.get_element_type()
    a_op = value_op(a.reshape(shape), TensorType(element, shape), store, _hint(bn.inputs[1], "bn_scale"))
    b_op = value_op(b.reshape(shape), TensorType(element, shape), store, _hint(bn.inputs[2], "bn_shift"))
    mul = graph.MulOp([x, a_op.results[0]])
    add = graph.AddOp([mul.outputs[0], b_op.results[0]])
    params = list(bn.inputs[1:])
    Rewriter.replace_op(bn, [a_op, b_op, mul, add], [add.outputs[0]])
    erase_if_dead(params)


def _affine_symbolic(bn: graph.BatchNormOp) -> None:
    x, scale, bias, mean, var = bn.inputs
    c = graph.shape_of(scale.type)[0]
    eps_value = np.full(c, bn.epsilon, dtype=np.float32)
    eps = graph.ConstantOp(DenseIntOrFPElementsAttr.from_list(scale.type, eps_value.tolist()))
    ops: list[Operation] = [eps]
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
    ops += [add_eps, root, a, ma, b, a_r, b_r, mul, add]
    Rewriter.replace_op(bn, ops, [add.outputs[0]])


def simplify_batch_norm(bn: graph.BatchNormOp, store: WeightStore | None) -> None:
    params = [known_value(v, store, NAME) for v in bn.inputs[1:]]
    if any(p is None for p in params):
        _affine_symbolic(bn)
        return
    scale, bias, mean, var = (p.astype(np.float64) for p in params)
    a = scale / np.sqrt(var + bn.epsilon)
    b = bias - mean * a
    dtype = params[0].dtype
    a, b = a.astype(dtype), b.astype(dtype)
    if not _fold_into_producer(bn, a, b, store):
        _affine_known(bn, a, b, store)


# -- identities ----------------------------------------------------------------------


def _splat(value: SSAValue) -> float | None:
    owner = value.owner
    if isinstance(owner, graph.ConstantOp) and owner.value.is_splat():
        return float(constant_value(owner).reshape(-1)[0])
    return None


def identity_operand(op: Operation) -> SSAValue | None:
    """The operand `op` returns unchanged, if it is an identity."""
    if not isinstance(op, graph.GraphOp) or len(op.outputs) != 1:
        return None
    out = op.outputs[0]
    x = op.inputs[0]
    same = x.type == out.type
    match op:
        case graph.ReshapeOp() | graph.FlattenOp() | graph.SqueezeOp() | graph.UnsqueezeOp() | graph.CastOp():
            return x if same else None
        case graph.TransposeOp() | graph.SliceOp() | graph.PadOp() | graph.SplitOp() | graph.LayoutTransformOp():
            # same type is necessary; each kind's attributes say whether it moves data
            if not same:
                return None
            if isinstance(op, graph.TransposeOp):
                rank = len(graph.shape_of(x.type))
                return x if op.permutation(rank) == list(range(rank)) else None
            if isinstance(op, graph.SliceOp):
                return x if all(st == 1 for _, _, st in op.ranges(graph.shape_of(x.type))) else None
            if isinstance(op, graph.PadOp):
                return x if not any(op.pads) else None
            if isinstance(op, graph.LayoutTransformOp):
                return x if op.src == op.dst else None
            return x  # a split into one piece
        case graph.ConcatOp():
            return x if len(op.inputs) == 1 else None
        case graph.ClipOp():
            return x if op.min is None and op.max is None else None
        case graph.MulOp() | graph.AddOp() | graph.SubOp():
            neutral = 1.0 if isinstance(op, graph.MulOp) else 0.0
            rhs, lhs = op.inputs[1], op.inputs[0]
            if _splat(rhs) == neutral and lhs.type == out.type:
                return lhs
            if not isinstance(op, graph.SubOp) and _splat(lhs) == neutral and rhs.type == out.type:
                return rhs
    return None


def simplify_block(block: Block, store: WeightStore | None) -> None:
    for op in list(block.ops):
        if op.parent is None:
            continue
        if isinstance(op, graph.BatchNormOp):
            simplify_batch_norm(op, store)
        elif (x := identity_operand(op)) is not None:
            operands = list(op.operands)
            Rewriter.replace_op(op, [], [x])
            erase_if_dead(operands)


@dataclass(frozen=True)
class SimplifyInferencePass(ModulePass):
    """Fold batch_norm into conv2d/dense or scale-and-shift; drop identity ops."""

    name = "simplify-inference"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        store = pass_store(op, NAME)
        for f in op.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                simplify_block(f.body.block, store)
