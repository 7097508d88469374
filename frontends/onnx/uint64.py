"""uint64 tensors: held as their bits in int64 (there is no wider signed type).

The importer marks such values (`Importer.unsigned`, 64 bits). Where the meaning of
an op does not depend on the sign (addition, subtraction and multiplication wrap
alike, equality and the bitwise ops look at bits, data movement copies them) the
int64 op is the uint64 op. Order is restored by flipping the sign bit
(`x ^ 2^63`): a <u b exactly when flip(a) <s flip(b), so comparisons, Max, Min and
TopK run on flipped operands (and flip their values back). Division and remainder
are built from signed ones:

- a divisor d >= 2^63 divides n once where n >= d, else not at all;
- otherwise q0 = 2 * ((n >>> 1) / d) is the quotient or one short of it (n >>> 1,
  the logical shift, is (n & -2) / 2 with the sign bit cleared; both operands of
  that division are non-negative), and the remainder r = n - q0 * d decides;
- a divisor of 0 gives 0 for both, as numpy.

Casts to and from floats go through `ui64` (uitofp / fptoui). Any other op on a
uint64 tensor is refused, naming it, rather than computed with the sign's meaning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import SSAValue

from tilecraft.dialects import graph

SIGN_BIT = -(1 << 63)
# Ops whose int64 form gives the uint64 result bit for bit.
BITWISE = frozenset({
    "Add", "Sub", "Mul", "Neg", "Equal", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
    "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split",
    "Slice", "Gather", "Expand", "Tile", "Where", "Shape", "Size", "Cast", "CastLike", "BitCast",
})  # fmt: skip
# Ops that compare: on flipped operands; FLIP_BACK[op] lists the outputs that are values.
ORDERED = frozenset({"Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Max", "Min", "TopK"})
FLIP_BACK = {"Max": (0,), "Min": (0,), "TopK": (0,)}


def flip(node, value: SSAValue | np.ndarray) -> SSAValue | np.ndarray:
    """The sign bit of int64 `value` (or of a uint64 array) toggled."""
    if isinstance(value, np.ndarray):
        return value.astype(np.uint64) ^ np.uint64(1 << 63)
    return node.emit(graph.BitwiseXorOp, [value, node.constant(np.array(SIGN_BIT, np.int64), "sign_bit")])


def convert(node, convert_default: Callable, is_uint64: Callable) -> Sequence:
    """The outputs of `node`, some of whose inputs are uint64 tensors."""
    op = node.op_type
    if op in ("Div", "Mod"):
        node.attr("fmod", 0)  # no sign, so both remainders agree
        return [_divide(node, remainder=op == "Mod")]
    if op in ORDERED:
        env = node.importer.env
        saved = {}
        for name in node.proto.input:
            if name and name not in saved and is_uint64(env[name]):
                saved[name] = env[name]
                env[name] = flip(node, env[name])
        try:
            outputs = list(convert_default(node))
        finally:
            env.update(saved)
        for i in FLIP_BACK.get(op, ()):
            if i < len(outputs) and isinstance(outputs[i], SSAValue):
                outputs[i] = flip(node, outputs[i])
        return outputs
    if op in BITWISE or (op == "BitShift" and node.attrs.get("direction") == b"LEFT"):
        return convert_default(node)  # (a right shift of int64 would fill with the sign)
    raise node.error(
        "uint64 inputs are supported by arithmetic (Add, Sub, Mul, Div, Mod), comparisons, "
        "Max, Min, TopK, bitwise ops, left shifts, casts and data movement only"
    )


def _divide(node, remainder: bool) -> SSAValue:
    n, d = node.input(0), node.input(1)
    zero, one, two = (node.scalar(v, n) for v in (0, 1, 2))

    def emit(cls, *operands):
        return node.emit(cls, list(operands))

    def at_least(a, b):  # a >=u b
        return emit(graph.GreaterEqualOp, flip(node, a), flip(node, b))

    def count(cond):  # 1 where cond, else 0
        return emit(graph.WhereOp, cond, one, zero)

    big = emit(graph.LessOp, d, zero)  # d >= 2^63
    half = emit(graph.BitwiseAndOp, emit(graph.DivOp, emit(graph.BitwiseAndOp, n, node.scalar(-2, n)), two),
                node.scalar((1 << 63) - 1, n))  # fmt: skip
    q0 = emit(graph.MulOp, emit(graph.DivOp, half, d), two)
    r0 = emit(graph.SubOp, n, emit(graph.MulOp, q0, d))
    q = emit(graph.AddOp, q0, count(at_least(r0, d)))
    q = emit(graph.WhereOp, big, count(at_least(n, d)), q)
    q = emit(graph.WhereOp, emit(graph.EqualOp, d, zero), zero, q)
    if not remainder:
        return q
    r = emit(graph.SubOp, n, emit(graph.MulOp, q, d))
    return emit(graph.WhereOp, emit(graph.EqualOp, d, zero), zero, r)
