"""Elementwise graph ops: unary and binary math with broadcasting, comparisons and
bitwise logic, casts, bitcasts and requantization, `where`, `broadcast_to`.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    IntegerType,
    TensorType,
    i1,
)
from xdsl.ir import Operation
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    traits_def,
)
from xdsl.traits import Pure

from xdsl.dialects.builtin import IndexType
from tilecraft.dialects.graph.traits import Broadcast, Injective
from tilecraft.dialects.graph.shapes import ShapeError, broadcast_shapes, ranked, shape_of, tensor
from tilecraft.dialects.graph.properties import ApproximateAttr, Enum, Float, Int, Ints, Type
from tilecraft.dialects.graph.op import GraphOp

__all__ = [
    "ReluOp", "SigmoidOp", "TanhOp", "ErfOp", "GeluOp", "ExpOp", "LogOp", "SqrtOp", "NegOp", "AbsOp", "ClipOp",
    "RequantizeOp", "CastOp", "BitcastOp", "AddOp", "SubOp", "MulOp", "DivOp", "PowOp", "MaximumOp", "MinimumOp",
    "WhereOp", "EqualOp", "LessOp", "GreaterOp", "BroadcastToOp", "LessEqualOp", "GreaterEqualOp", "NotEqualOp",
    "BitwiseAndOp", "BitwiseOrOp", "BitwiseXorOp", "BitwiseNotOp", "ModOp", "LOGIC_OPS", "SinOp", "CosOp", "TanOp",
    "AsinOp", "AcosOp", "AtanOp", "SinhOp", "CoshOp", "AsinhOp", "AcoshOp", "AtanhOp", "FloorOp", "CeilOp",
    "RoundOp", "FmodOp", "MATH_OPS",
]  # fmt: skip


# -- elementwise ------------------------------------------------------------------


class _Unary(GraphOp):
    input = operand_def()
    traits = traits_def(Pure(), Injective())
    SYMBOLIC: ClassVar[bool] = True  # (the result is the operand's type)

    def infer(self, types):
        return [ranked(types[0])]


@irdl_op_definition
class ReluOp(_Unary):
    name = "graph.relu"


@irdl_op_definition
class SigmoidOp(_Unary):
    name = "graph.sigmoid"


@irdl_op_definition
class TanhOp(_Unary):
    name = "graph.tanh"


@irdl_op_definition
class ErfOp(_Unary):
    name = "graph.erf"


@irdl_op_definition
class GeluOp(_Unary):
    """x * Phi(x); `approximate` is "none" (erf) or "tanh"."""

    name = "graph.gelu"
    approximate = Enum(ApproximateAttr, default="none")


@irdl_op_definition
class ExpOp(_Unary):
    name = "graph.exp"


@irdl_op_definition
class LogOp(_Unary):
    name = "graph.log"


@irdl_op_definition
class SqrtOp(_Unary):
    name = "graph.sqrt"


@irdl_op_definition
class NegOp(_Unary):
    name = "graph.neg"


@irdl_op_definition
class AbsOp(_Unary):
    name = "graph.abs"


@irdl_op_definition
class ClipOp(_Unary):
    """min(max(x, `min`), `max`); a missing bound is unbounded."""

    name = "graph.clip"
    min = Float(default=None)
    max = Float(default=None)


@irdl_op_definition
class RequantizeOp(GraphOp):
    """An integer accumulator scaled by 2^-`shift` back to a narrow integer type `to`:
    `clip(floor((x + 2^(shift-1)) / 2^shift), min(to), max(to))` (rounding half up;
    `shift` 0 only clips), wrapping at x's width as integer adds do. What a
    power-of-two symmetric quantization puts between two quantized layers (TVM's
    qnn.requantize with a power-of-two scale); the accelerator's ALU computes it as
    ADD, SHR, MAX, MIN and a narrowing store."""

    name = "graph.requantize"
    input = operand_def()
    traits = traits_def(Pure(), Injective())
    shift = Int(default=0)
    to = Type()

    def infer(self, types):
        x = ranked(types[0]).get_element_type()
        if not isinstance(x, IntegerType) or not isinstance(self.to, IntegerType):
            raise ShapeError(f"requantize takes an integer tensor to an integer type, got {x} to {self.to}")
        if not 0 <= self.shift < x.width.data - 1:  # 2^shift must be an x too
            raise ShapeError(f"shift {self.shift} must be in [0, {x.width.data - 1})")
        return [tensor(shape_of(types[0]), self.to)]


@irdl_op_definition
class CastOp(GraphOp):
    """Element type conversion to the element type `to` (`{to = f32}`); floats to
    integers truncate toward zero, anything to i1 is `!= 0`."""

    name = "graph.cast"
    input = operand_def()
    traits = traits_def(Pure(), Injective())
    to = Type()

    def infer(self, types):
        return [tensor(shape_of(types[0]), self.to)]


@irdl_op_definition
class BitcastOp(GraphOp):
    """The bits of each element read as the element type `to`, of the same width
    (ONNX BitCast): `{to = i32}` on f32 gives the float's IEEE bits."""

    name = "graph.bitcast"
    input = operand_def()
    traits = traits_def(Pure(), Injective())
    to = Type()

    def infer(self, types):
        source = ranked(types[0]).get_element_type()
        width = lambda t: None if isinstance(t, IndexType) else getattr(t, "bitwidth", None)  # noqa: E731
        if width(source) is None or width(source) != width(self.to) or width(source) == 1:
            raise ShapeError(f"cannot bitcast {source} to {self.to}: they are not of one bit width (8 to 64 bits)")
        return [tensor(shape_of(types[0]), self.to)]


class _Binary(GraphOp):
    traits = traits_def(Pure(), Broadcast())
    lhs = operand_def()
    rhs = operand_def()
    # Symbolic sizes broadcast as equal sizes or against 1; `batch` against 5 is an
    # error (it would hold for one batch only), as is `batch` against `n`.
    SYMBOLIC: ClassVar[bool] = True

    def infer(self, types):
        a, b = ranked(types[0]), ranked(types[1])
        if a.get_element_type() != b.get_element_type():
            raise ShapeError(f"element types {a.get_element_type()} and {b.get_element_type()} differ")
        return [tensor(broadcast_shapes(shape_of(a), shape_of(b)), a.get_element_type())]


@irdl_op_definition
class AddOp(_Binary):
    name = "graph.add"


@irdl_op_definition
class SubOp(_Binary):
    name = "graph.sub"


@irdl_op_definition
class MulOp(_Binary):
    name = "graph.mul"


@irdl_op_definition
class DivOp(_Binary):
    name = "graph.div"


@irdl_op_definition
class PowOp(_Binary):
    name = "graph.pow"


@irdl_op_definition
class MaximumOp(_Binary):
    name = "graph.maximum"


@irdl_op_definition
class MinimumOp(_Binary):
    name = "graph.minimum"


@irdl_op_definition
class WhereOp(GraphOp):
    """`where(cond, a, b)` elementwise with broadcasting; cond is i1."""

    name = "graph.where"
    traits = traits_def(Pure(), Broadcast())
    condition = operand_def()
    on_true = operand_def()
    on_false = operand_def()

    def infer(self, types):
        c, a, b = (ranked(t) for t in types)
        if c.get_element_type() != i1:
            raise ShapeError(f"the condition must have element type i1, not {c.get_element_type()}")
        if a.get_element_type() != b.get_element_type():
            raise ShapeError("both branches must have one element type")
        return [tensor(broadcast_shapes(shape_of(c), shape_of(a), shape_of(b)), a.get_element_type())]


class _Compare(_Binary):
    """Elementwise comparison with broadcasting; the result is a mask of i1."""

    def infer(self, types):
        (out,) = super().infer(types)
        return [tensor(shape_of(out), i1)]


@irdl_op_definition
class EqualOp(_Compare):
    name = "graph.equal"


@irdl_op_definition
class LessOp(_Compare):
    name = "graph.less"


@irdl_op_definition
class GreaterOp(_Compare):
    name = "graph.greater"


@irdl_op_definition
class BroadcastToOp(GraphOp):
    """Broadcast the input against `shape` (ONNX Expand: the result's shape is the
    broadcast of both, so `shape` may have 1s where the input is larger)."""

    name = "graph.broadcast_to"
    input = operand_def()
    traits = traits_def(Pure(), Broadcast())
    shape = Ints()

    def infer(self, types):
        x = ranked(types[0])
        return [tensor(broadcast_shapes(shape_of(x), self.shape), x.get_element_type())]


# -- comparisons, bitwise logic, integer mod (ONNX GreaterOrEqual, And, Mod...) --------


@irdl_op_definition
class LessEqualOp(_Compare):
    name = "graph.less_equal"


@irdl_op_definition
class GreaterEqualOp(_Compare):
    name = "graph.greater_equal"


@irdl_op_definition
class NotEqualOp(_Compare):
    """`a != b`; true where either is NaN (so `x != x` is IsNaN)."""

    name = "graph.not_equal"


def _integer_elements(t: TensorType, op_name: str) -> TensorType:
    if not isinstance(t.get_element_type(), IntegerType):
        raise ShapeError(f"{op_name} takes integer or i1 elements, not {t.get_element_type()}")
    return t


class _Bitwise(_Binary):
    """Bitwise logic on integers; on i1 it is logical and/or/xor."""

    def infer(self, types):
        return [_integer_elements(t, self.name) for t in super().infer(types)]


@irdl_op_definition
class BitwiseAndOp(_Bitwise):
    name = "graph.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(_Bitwise):
    name = "graph.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(_Bitwise):
    name = "graph.bitwise_xor"


@irdl_op_definition
class BitwiseNotOp(_Unary):
    """`~x`; on i1, logical not."""

    name = "graph.bitwise_not"

    def infer(self, types):
        return [_integer_elements(ranked(types[0]), self.name)]


@irdl_op_definition
class ModOp(_Binary):
    """Remainder with the sign of the divisor (numpy's `%`, ONNX Mod with fmod=0):
    `a - floor(a / b) * b`. An integer zero divisor gives 0 (as numpy does); on
    floats it is numpy's `mod` (NaN for a zero divisor or an infinite dividend)."""

    name = "graph.mod"

    def infer(self, types):
        (t,) = super().infer(types)
        if t.get_element_type() == i1:
            raise ShapeError(f"{self.name} takes integer or float elements, not i1")
        return [t]


LOGIC_OPS: list[type[Operation]] = [
    LessEqualOp, GreaterEqualOp, NotEqualOp, BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, BitwiseNotOp, ModOp,
]  # fmt: skip


# -- unary math and the truncated remainder (ONNX Sin ... Round, Mod with fmod=1) ------


class _FloatUnary(_Unary):
    """An elementwise function of floating-point elements (f16, f32, f64)."""

    def infer(self, types):
        t = ranked(types[0])
        if isinstance(t.get_element_type(), IntegerType):
            raise ShapeError(f"{self.name} takes floating-point elements, not {t.get_element_type()}")
        return [t]


@irdl_op_definition
class SinOp(_FloatUnary):
    name = "graph.sin"


@irdl_op_definition
class CosOp(_FloatUnary):
    name = "graph.cos"


@irdl_op_definition
class TanOp(_FloatUnary):
    name = "graph.tan"


@irdl_op_definition
class AsinOp(_FloatUnary):
    name = "graph.asin"


@irdl_op_definition
class AcosOp(_FloatUnary):
    name = "graph.acos"


@irdl_op_definition
class AtanOp(_FloatUnary):
    name = "graph.atan"


@irdl_op_definition
class SinhOp(_FloatUnary):
    name = "graph.sinh"


@irdl_op_definition
class CoshOp(_FloatUnary):
    name = "graph.cosh"


@irdl_op_definition
class AsinhOp(_FloatUnary):
    name = "graph.asinh"


@irdl_op_definition
class AcoshOp(_FloatUnary):
    name = "graph.acosh"


@irdl_op_definition
class AtanhOp(_FloatUnary):
    name = "graph.atanh"


@irdl_op_definition
class FloorOp(_FloatUnary):
    name = "graph.floor"


@irdl_op_definition
class CeilOp(_FloatUnary):
    name = "graph.ceil"


@irdl_op_definition
class RoundOp(_FloatUnary):
    """Rounds to the nearest integer, halves to the even one (ONNX Round, numpy's
    `rint`): 2.5 -> 2, -1.5 -> -2."""

    name = "graph.round"


@irdl_op_definition
class FmodOp(_Binary):
    """Remainder with the sign of the dividend (C's `fmod`, numpy's `fmod`, ONNX Mod
    with fmod=1): `a - trunc(a / b) * b`. An integer zero divisor gives 0 (numpy)."""

    name = "graph.fmod"

    def infer(self, types):
        (t,) = super().infer(types)
        if t.get_element_type() == i1:
            raise ShapeError(f"{self.name} takes integer or float elements, not i1")
        return [t]


MATH_OPS: list[type[Operation]] = [
    SinOp, CosOp, TanOp, AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp,
    FloorOp, CeilOp, RoundOp, FmodOp,
]  # fmt: skip
