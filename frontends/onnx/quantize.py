"""QuantizeLinear and DequantizeLinear (per tensor and per axis), MatMulInteger and
QLinearMatMul, composed from graph ops so they fuse with their neighbours:

- dequantize: (float(x) - float(zero_point)) * scale;
- quantize: clip(round_half_even(x / scale) + zero_point, lo, hi), converted to the
  zero point's integer type, [lo, hi] being the whole range of the zero point's ONNX
  type (uintN included, though held widened). The sum and the clip are in float32,
  or in float64 for 32-bit types, whose bounds float32 does not hold exactly.

- MatMulInteger: (a - a_zero) @ (b - b_zero) in int32 (exact for 8-bit operands);
  QLinearMatMul scales that in float64 and rounds and clips as QuantizeLinear does,
  as onnx's reference computes it.

A per-axis scale (and zero point) of extent C is reshaped to [C, 1, ...] so it
broadcasts along `axis`. Blocked quantization (`block_size`) is not supported.
The ops are typed by the zero point, so every integer type the importer has takes
the same path (int4/uint4/int2/uint2 too, held in int8). Float8 and float4 zero
points give x / scale (float8: clipped unless `saturate` is 0; float4: plus the
zero point), which the importer rounds to the zero point's type.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerType, f32, f64, i32
from xdsl.ir import SSAValue

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import ONNX_TYPES, SATURATING, TP, Node, converter
from tilecraft.frontends.onnx.nn import matmul

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
    rounded = node.emit(graph.RoundOp, [x])  # halves to even
    # float32 holds every integer up to 2^24 and so the bounds of narrower types; 32-bit
    # ones are added to the zero point and clipped in float64, where all are exact.
    wide = f64 if max(-int(info.min), int(info.max)) > 2**24 else f32
    if wide == f64:
        rounded = node.emit(graph.CastOp, [rounded], to=f64)
    shifted = node.emit(graph.AddOp, [rounded, node.emit(graph.CastOp, [_per_axis(node, node.input(2), rank)], to=wide)])
    width = 64 if wide == f64 else 32
    clipped = node.emit(graph.ClipOp, [shifted], min=FloatAttr(float(info.min), width), max=FloatAttr(float(info.max), width))
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


def _integer_operand(node: Node, i: int, zero: int | None, axis: int) -> SSAValue:
    """Input `i` in int32, minus its zero point (input `zero`): one value, or one per
    row of A (`axis` -2) / column of B (`axis` -1)."""
    x = node.emit(graph.CastOp, [node.input(i)], to=i32)
    if zero is None or not node.has_input(zero):
        return x
    z = node.emit(graph.CastOp, [node.input(zero)], to=i32)
    count = int(np.prod(node.shape(zero)))
    shape = node.shape(i)
    if count == 1:
        z = node.emit(graph.ReshapeOp, [z], shape=[])
    elif len(node.shape(zero)) == 1 and len(shape) == 2 and count == shape[axis]:
        z = node.emit(graph.ReshapeOp, [z], shape=[count, 1] if axis == -2 else [count])
    else:
        raise node.error(f"a zero point of shape {node.shape(zero)} for an input of shape {shape} is not supported "
                         "(one value, or one per row of A / column of B)")  # fmt: skip
    return node.emit(graph.SubOp, [x, z])


@converter("MatMulInteger")
def convert_matmul_integer(node: Node):
    a = _integer_operand(node, 0, 2, -2)
    b = _integer_operand(node, 1, 3, -1)
    return [matmul(node, a, b)]


@converter("QLinearMatMul")
def convert_qlinear_matmul(node: Node):
    """As onnx's reference computes it: C = (a - a_zero) @ (b - b_zero) in int32, then
    round_half_even(C * (a_scale * b_scale / y_scale) + y_zero) in float64 (the factor
    in the scales' own type), clipped to the output type."""
    for i, what in ((1, "a_scale"), (4, "b_scale"), (6, "y_scale")):
        if int(np.prod(node.shape(i))) != 1:
            raise node.error(f"{what} of shape {node.shape(i)} is not supported (one value)")
    a = _integer_operand(node, 0, 2, -2)
    b = _integer_operand(node, 3, 5, -1)
    c = matmul(node, a, b)
    if all(node.is_const(i) for i in (1, 4, 6)):
        a_s, b_s, y_s = (node.const(i, "scale").reshape(()) for i in (1, 4, 6))
        factor = node.constant(np.asarray(a_s * b_s / y_s, np.float64), "scale")
    else:
        scales = [node.emit(graph.ReshapeOp, [node.input(i)], shape=[]) for i in (1, 4, 6)]
        factor = node.emit(graph.DivOp, [node.emit(graph.MulOp, scales[:2]), scales[2]])
        factor = node.emit(graph.CastOp, [factor], to=f64)
    d = node.emit(graph.MulOp, [node.emit(graph.CastOp, [c], to=f64), factor])
    if node.has_input(7):
        zero = node.emit(graph.ReshapeOp, [node.emit(graph.CastOp, [node.input(7)], to=f64)], shape=[])
        d = node.emit(graph.AddOp, [d, zero])
    element = node.element_type(7 if node.has_input(7) else 0)
    bits = node.importer.unsigned_bits_of(node.raw(7 if node.has_input(7) else 0))
    onnx_type = next(k for k, (t, n) in ONNX_TYPES.items() if t == element and (bits is None) == (n(0).dtype.kind == "i"))
    info = ml_dtypes.iinfo(ONNX_TYPES[onnx_type][1])
    rounded = node.emit(graph.RoundOp, [d])
    clipped = node.emit(graph.ClipOp, [rounded], min=FloatAttr(float(info.min), 64), max=FloatAttr(float(info.max), 64))
    return [node.emit(graph.CastOp, [clipped], to=element)]
