"""quantize-int8: symmetric int8 post-training quantization with power-of-two scales.

A float conv2d or dense that calibration annotated with the largest magnitude its
input took (`{tc.input_absmax = 3.2 : f64}`, see `analysis/calibration.py`) computes
on int8 values and an int32 accumulator instead. Scales are powers of two, chosen per
tensor: 2^e with the smallest e such that absmax / 2^e <= 127, so that moving between
scales is a shift (what the accelerator's ALU does) and a dequantized value is exact.

`QuantizeAnchor` rewrites one anchor (x in f32, weight w and bias b known):

```
q   = cast<i8>(clip(round(x * 2^-ex), -128, 127))       (quantize x)
acc = conv2d(cast<i32>(q), cast<i32>(wq), bq)            (i32; wq = round(w / 2^ew) in
                                                           [-127, 127] as i8, bq = round(b / 2^(ex+ew)))
y   = cast<f32>(acc) * 2^(ex+ew)                         (dequantize: replaces the result)
```

`FoldRequantize` then removes the float round trip between two quantized layers:
a quantize whose input is a dequantized accumulator, possibly through a relu
(relu commutes with a positive scale), becomes
`graph.requantize(relu(acc)) {shift = ex' - ea}` straight from the int32 accumulator
(rounding half up by the shift, as the integer path does; the float round it
replaces rounds half to even, so the quantized model is defined by this IR, and
its numpy evaluation is the reference). A quantize with a finer scale than the
accumulator (negative shift) keeps the float path.

An anchor without the annotation, in a blocked layout, of another element type or
with weights unknown at compile time stays float. The result is graph IR like any
other: `tc.compile` runs it on the CPU; the accelerator offload looks for
conv2d/dense on `cast<i32>` of int8 values followed by requantize.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerType, ModuleOp, TensorType, f32, i8, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from tilecraft.analysis.calibration import ABSMAX_ATTR
from tilecraft.dialects import graph
from tilecraft.dialects.graph_values import constant_op, known_value, store_near, value_op
from tilecraft.utils.diagnostics import OpError

NAME = "quantize-int8"
QMAX = 127


def scale_exponent(absmax: float) -> int:
    """The smallest e with absmax / 2^e <= 127 (0 for an all-zero tensor)."""
    if not absmax > 0 or not math.isfinite(absmax):
        return 0
    e = math.ceil(math.log2(absmax / QMAX))
    while absmax / 2.0**e > QMAX:  # log2 rounding at exact powers
        e += 1
    return e


def _add(rewriter: PatternRewriter, op: Operation, before: Operation) -> SSAValue:
    rewriter.insert(op, _before(before))
    return op.results[0]


def _before(op: Operation):
    from xdsl.rewriter import InsertPoint

    return InsertPoint.before(op)


def _element(value: SSAValue):
    return graph.ranked(value.type).get_element_type()


class QuantizeAnchor(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, (graph.Conv2dOp, graph.DenseOp)) or ABSMAX_ATTR not in op.attributes:
            return
        if isinstance(op, graph.Conv2dOp) and op.layouts() != (0, (0, 0), 0):
            return
        if isinstance(op, graph.DenseOp) and op.weight_layout != graph.WeightLayout.NK:
            return
        x = op.input
        if not isinstance(_element(x), Float32Type) or not isinstance(_element(op.outputs[0]), Float32Type):
            return
        store = store_near(op, NAME)
        w = known_value(op.weight, store, NAME)
        b = known_value(op.bias, store, NAME) if op.bias is not None else None
        if w is None or (op.bias is not None and b is None):
            return
        absmax = op.attributes[ABSMAX_ATTR]
        if not isinstance(absmax, FloatAttr) or not 0 <= absmax.value.data < math.inf:
            raise OpError(op, f"{NAME}: {ABSMAX_ATTR} must be a finite non-negative float (the largest "
                          f"|input| calibration saw), not {absmax}")
        ex = scale_exponent(absmax.value.data)
        ew = scale_exponent(float(np.max(np.abs(w))) if w.size else 0.0)
        wq = np.clip(np.round(w.astype(np.float64) / 2.0**ew), -QMAX, QMAX).astype(np.int8)
        hint = op.weight.name_hint or "weight"
        w_op = value_op(wq, TensorType(i8, list(w.shape)), store, f"{hint}.int8")
        rewriter.insert(w_op, _before(op))
        operands = [
            _add(rewriter, graph.CastOp([quantize(rewriter, x, ex, op)], {"to": i32}), op),
            _add(rewriter, graph.CastOp([w_op.results[0]], {"to": i32}), op),
        ]
        if b is not None:
            limit = np.iinfo(np.int32)
            bq = np.clip(np.round(b.astype(np.float64) / 2.0 ** (ex + ew)), limit.min, limit.max).astype(np.int32)
            b_op = value_op(bq, TensorType(i32, list(b.shape)), store, f"{hint}.bias.int32")
            rewriter.insert(b_op, _before(op))
            operands.append(b_op.results[0])
        attributes = {k: v for k, v in op.attributes.items() if k != ABSMAX_ATTR}
        acc = type(op)(operands, dict(op.properties), attributes=attributes)
        rewriter.insert(acc, _before(op))
        as_float = _add(rewriter, graph.CastOp([acc.outputs[0]], {"to": f32}), op)
        scale = _add(rewriter, _splat_op(2.0 ** (ex + ew)), op)
        rewriter.replace(op, graph.MulOp([as_float, scale]))


def _splat_op(value: float) -> Operation:
    return constant_op(np.array(value, dtype=np.float32), TensorType(f32, []))


def quantize(rewriter: PatternRewriter, x: SSAValue, e: int, before: Operation) -> SSAValue:
    """cast<i8>(clip(round(x * 2^-e), -128, 127)), inserted before `before`."""
    scale = _add(rewriter, _splat_op(2.0**-e), before)
    scaled = _add(rewriter, graph.MulOp([x, scale]), before)
    rounded = _add(rewriter, graph.RoundOp([scaled]), before)
    clipped = _add(rewriter, graph.ClipOp([rounded], {"min": -128.0, "max": 127.0}), before)
    return _add(rewriter, graph.CastOp([clipped], {"to": i8}), before)


@dataclass
class Dequantized:
    acc: SSAValue  # the int32 accumulator
    exponent: int  # value = acc * 2^exponent
    relu: bool


def _splat_value(value: SSAValue) -> float | None:
    owner = value.owner
    if isinstance(owner, graph.ConstantOp):
        array = np.asarray(graph_constant(owner))
        if array.size >= 1 and np.all(array == array.reshape(-1)[0]):
            return float(array.reshape(-1)[0])
    return None


def graph_constant(op: graph.ConstantOp) -> np.ndarray:
    from tilecraft.dialects.graph_reference import constant_value

    return constant_value(op)


def _power_of_two(value: float | None) -> int | None:
    if value is None or value <= 0:
        return None
    mantissa, exponent = math.frexp(value)
    return exponent - 1 if mantissa == 0.5 else None


def dequantized(value: SSAValue) -> Dequantized | None:
    """`value` as relu?(cast<f32>(acc : i32) * 2^e), if it is one."""
    relu = False
    owner = value.owner
    if isinstance(owner, graph.ReluOp):
        relu, owner = True, owner.input.owner
    if not isinstance(owner, graph.MulOp):
        return None
    for cast, scale in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
        e = _power_of_two(_splat_value(scale))
        if e is None or graph.shape_of(scale.type) != () or not isinstance(cast.owner, graph.CastOp):
            continue
        acc = cast.owner.input
        element = _element(acc)
        if isinstance(element, IntegerType) and element.width.data == 32 and isinstance(_element(cast), Float32Type):
            return Dequantized(acc, e, relu)
    return None


class FoldRequantize(RewritePattern):
    """cast<i8>(clip(round(D * 2^-e))) of a dequantized D -> requantize of its accumulator."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, graph.CastOp) or _element(op.outputs[0]) != i8:
            return
        clip = op.input.owner
        if not isinstance(clip, graph.ClipOp) or (clip.min, clip.max) != (-128.0, 127.0):
            return
        rounded = clip.input.owner
        if not isinstance(rounded, graph.RoundOp) or not isinstance(rounded.input.owner, graph.MulOp):
            return
        mul = rounded.input.owner
        e = _power_of_two(_splat_value(mul.rhs))
        source = dequantized(mul.lhs)
        if e is None or source is None:
            return
        shift = -e - source.exponent  # value * 2^-ex' = acc * 2^(ea - ex')
        if shift < 0 or shift >= 32:
            return
        acc = source.acc
        if source.relu:
            acc = _add(rewriter, graph.ReluOp([acc]), op)
        rewriter.replace(op, graph.RequantizeOp([acc], {"shift": shift, "to": i8}))


@dataclass(frozen=True)
class QuantizeInt8Pass(ModulePass):
    """Annotated float conv2d/dense -> int8 x int8 -> int32, requantized between layers."""

    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(QuantizeAnchor(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(GreedyRewritePatternApplier([FoldRequantize()])).rewrite_module(op)
        from xdsl.transforms.dead_code_elimination import region_dce

        region_dce(op.body)
