"""QuantizeLinear and DequantizeLinear (per tensor and per axis), composed from
graph ops so they fuse with their neighbours:

- dequantize: (float(x) - float(zero_point)) * scale;
- quantize: clip(round_half_even(x / scale) + zero_point, lo, hi), converted to the
  zero point's integer type, [lo, hi] being the range of the zero point's ONNX type
  (uintN included, though held widened; for int32 and uint32, 256 short of it, where
  float32 still holds the bounds exactly). Rounding to nearest even is built from
  truncation (a cast to int32 and back): t = trunc(v), then one step away from zero
  where |v - t| > 1/2, or = 1/2 and t is odd. v is x / scale clipped to [-2^23, 2^23],
  so the int32 cast cannot overflow; where |x / scale| >= 2^23 it is a whole number
  already and is kept as is. The zero point is added after rounding, before the clip.

A per-axis scale (and zero point) of extent C is reshaped to [C, 1, ...] so it
broadcasts along `axis`. Blocked quantization (`block_size`) is not supported.
The ops are typed by the zero point, so every integer type the importer has takes
the same path (int4/uint4/int2/uint2 too, held in int8). Float8 and float4 zero
points give x / scale (float8: clipped unless `saturate` is 0; float4: plus the
zero point), which the importer rounds to the zero point's type.
"""

from __future__ import annotations

import ml_dtypes
from xdsl.dialects.builtin import IntegerType, f32, i32
from xdsl.ir import SSAValue

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import ONNX_TYPES, SATURATING, TP, Node, converter

NARROW_INTS = (TP.INT4, TP.UINT4, TP.INT2, TP.UINT2)


def _per_axis(node: Node, value: SSAValue, rank: int) -> SSAValue:
    """A 1-D scale or zero point of extent C reshaped to broadcast along `axis`."""
    shape = graph.shape_of(value.type)
    if len(shape) == 0 or shape == (1,):
        return value
    if len(shape) != 1:
        raise node.error(f"a scale or zero point of shape {shape} (blocked quantization) is not supported")
    axis = int(node.attr("axis", 1)) % rank
    return node.emit(graph.ReshapeOp, [value], shape=[shape[0]] + [1] * (rank - 1 - axis))


def _check_block(node: Node) -> None:
    node.attr("axis", 1)  # read here: it changes nothing for a per-tensor scale
    if int(node.attr("block_size", 0)):
        raise node.error("blocked quantization (block_size) is not supported")


@converter("DequantizeLinear")
def convert_dequantize(node: Node):
    _check_block(node)
    narrow = node.importer.narrow_type_of(node.raw(0))  # float8/float4 held in float32
    if narrow is None and not isinstance(node.element_type(0), IntegerType):
        raise node.error(f"input of element type {node.element_type(0)} is not supported (integers only)")
    rank = len(node.shape(0))
    if node.attr("output_dtype", 0) not in (0, 1):  # 1: float
        raise node.error("only float32 outputs are supported")
    x = node.input(0)
    if node.element_type(0) != f32:
        x = node.emit(graph.CastOp, [x], to=f32)
    if node.has_input(2):
        zero = _per_axis(node, node.input(2), rank)
        if node.element_type(2) != f32:
            zero = node.emit(graph.CastOp, [zero], to=f32)
        x = node.emit(graph.SubOp, [x, zero])
    scale = _per_axis(node, node.input(1), rank)
    scale_type = node.element_type(1)
    if scale_type == f32:
        return [node.emit(graph.MulOp, [x, scale])]
    # the product in float32, then the scale's type (float16), as the reference
    y = node.emit(graph.MulOp, [x, node.emit(graph.CastOp, [scale], to=f32)])
    return [node.emit(graph.CastOp, [y], to=scale_type)]


@converter("QuantizeLinear")
def convert_quantize(node: Node):
    _check_block(node)
    saturate = bool(node.attr("saturate", 1))  # only meaningful for float8 outputs
    if node.attr("precision", 0):
        raise node.error("attribute 'precision' is not supported")
    if not node.has_input(2):
        raise node.error("a zero point is needed (its element type is the output's)")
    if node.element_type(0) != f32:
        raise node.error(f"input of element type {node.element_type(0)} is not supported (float32 only)")
    element = node.element_type(2)
    narrow = node.importer.narrow_type_of(node.raw(2))  # int4, float8...: held widened
    if narrow is not None and narrow not in NARROW_INTS:
        return [_quantize_float(node, narrow, saturate)]
    if not isinstance(element, IntegerType):
        raise node.error(f"zero point of element type {element} is not supported (integers only)")
    bits = node.importer.unsigned_bits_of(node.raw(2))  # a uintN zero point is held widened
    onnx_type = narrow or next(k for k, (t, n) in ONNX_TYPES.items() if t == element and (bits is None) == (n(0).dtype.kind == "i"))
    if node.attr("output_dtype", 0) not in (0, onnx_type):
        raise node.error("output_dtype must be the zero point's element type")
    info = ml_dtypes.iinfo(ONNX_TYPES[onnx_type][1])
    rank = len(node.shape(0))
    x = node.emit(graph.DivOp, [node.input(0), _per_axis(node, node.input(1), rank)])
    # Bounds exact in float32 (int32 and uint32 outputs saturate 256 short of their range).
    lo = float(info.min) if info.min > -(2**24) else float(info.min + 256)
    hi = float(info.max) if info.max < 2**24 else float(info.max + 1 - 256)
    # |x| >= 2^23 is a whole number already; rounding works on x clipped below that, so
    # the int32 cast cannot overflow, and the zero point is added to the unclipped value.
    big = 2.0**23
    v = node.emit(graph.ClipOp, [x], min=-big, max=big)
    t = node.emit(graph.CastOp, [node.emit(graph.CastOp, [v], to=i32)], to=f32)  # trunc(v)
    d = node.emit(graph.SubOp, [v, t])
    half = node.scalar(0.5, v)
    # t is even where t / 2 is a whole number
    halved = node.emit(graph.MulOp, [t, half])
    even = node.emit(graph.EqualOp, [halved, node.emit(graph.CastOp, [node.emit(graph.CastOp, [halved], to=i32)], to=f32)])
    tie = node.emit(graph.EqualOp, [node.emit(graph.AbsOp, [d]), half])
    one, zero = node.scalar(1.0, v), node.scalar(0.0, v)
    # away from zero: |d| > 1/2, or a tie with t odd
    away = node.emit(graph.AddOp, [
        node.emit(graph.WhereOp, [node.emit(graph.GreaterOp, [node.emit(graph.AbsOp, [d]), half]), one, zero]),
        node.emit(graph.WhereOp, [tie, node.emit(graph.WhereOp, [even, zero, one]), zero]),
    ])  # fmt: skip
    sign = node.emit(graph.WhereOp, [node.emit(graph.LessOp, [d, zero]), node.scalar(-1.0, v), one])
    rounded = node.emit(graph.AddOp, [t, node.emit(graph.MulOp, [away, sign])])
    large = node.emit(graph.GreaterEqualOp, [node.emit(graph.AbsOp, [x]), node.scalar(big, x)])
    rounded = node.emit(graph.WhereOp, [large, x, rounded])
    shifted = node.emit(graph.AddOp, [rounded, node.emit(graph.CastOp, [_per_axis(node, node.input(2), rank)], to=f32)])
    clipped = node.emit(graph.ClipOp, [shifted], min=lo, max=hi)
    return [node.emit(graph.CastOp, [clipped], to=element)]


def _quantize_float(node: Node, narrow: int, saturate: bool) -> SSAValue:
    """To float8: x / scale, clipped to the type's largest value unless `saturate` is
    0 (the zero point is 0 by the spec and ignored, as the reference does); to
    float4: x / scale + zero point. The importer rounds the result to the zero
    point's type (importer.NARROW)."""
    if node.attr("output_dtype", 0) not in (0, narrow):
        raise node.error("output_dtype must be the zero point's element type")
    rank = len(node.shape(0))
    x = node.emit(graph.DivOp, [node.input(0), _per_axis(node, node.input(1), rank)])
    if narrow in SATURATING:
        if saturate:
            x = node.emit(graph.ClipOp, [x], min=-SATURATING[narrow], max=SATURATING[narrow])
        return x
    return node.emit(graph.AddOp, [x, _per_axis(node, node.input(2), rank)])
