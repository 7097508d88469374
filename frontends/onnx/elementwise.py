"""Converters of elementwise ONNX operators: arithmetic, activations, comparisons.

Most are one graph op. The rest are small compositions, chosen so that they stay
elementwise (and so fuse): Reciprocal is `1 / x`, LeakyRelu `max(x, alpha * x)`,
HardSigmoid `clip(alpha * x + beta, 0, 1)` (HardSwish: x times that), variadic
Max/Min/Sum chains of binary ops. Dropout and Identity forward their input
(inference only).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import AnyFloat, IntegerType, Signedness, f64, i1, i64
from xdsl.ir import SSAValue

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import (
    NARROW,
    ONNX_TYPES,
    SATURATING,
    SUPPORTED_TYPES,
    TP,
    UNSIGNED_BITS,
    Node,
    converter,
    onnx_type_name,
)

UI64 = IntegerType(64, Signedness.UNSIGNED)

UNARY: dict[str, type[graph.GraphOp]] = {
    "Relu": graph.ReluOp,
    "Sigmoid": graph.SigmoidOp,
    "Tanh": graph.TanhOp,
    "Erf": graph.ErfOp,
    "Exp": graph.ExpOp,
    "Log": graph.LogOp,
    "Sqrt": graph.SqrtOp,
    "Neg": graph.NegOp,
    "Abs": graph.AbsOp,
}

BINARY: dict[str, type[graph.GraphOp]] = {
    "Add": graph.AddOp,
    "Sub": graph.SubOp,
    "Mul": graph.MulOp,
    "Div": graph.DivOp,
    "Equal": graph.EqualOp,
    "Less": graph.LessOp,
    "Greater": graph.GreaterOp,
}

VARIADIC: dict[str, type[graph.GraphOp]] = {
    "Max": graph.MaximumOp,
    "Min": graph.MinimumOp,
    "Sum": graph.AddOp,
}


@converter(*UNARY)
def convert_unary(node: Node):
    return [node.emit(UNARY[node.op_type], [node.input(0)])]


@converter(*BINARY)
def convert_binary(node: Node):
    return [node.emit(BINARY[node.op_type], [node.input(0), node.input(1)])]


@converter(*VARIADIC)
def convert_variadic(node: Node):
    values = node.inputs()
    result = values[0]
    for v in values[1:]:
        result = node.emit(VARIADIC[node.op_type], [result, v])
    return [result]


@converter("Pow")
def convert_pow(node: Node):
    """x ** y, of x's element type. ONNX lets y have another type; graph.pow takes
    one, so y is converted: to x's float type; for integer x, an integer y is
    computed in the wider of the two types (the power wraps as numpy's) and a
    float y in f64 (numpy's promotion), the result truncated back to x's type. A
    known y is converted at import when that is exact (x ** 2 with an int64 2)."""
    base = node.input(0)
    base_type, exponent_type = node.element_type(0), node.element_type(1)
    if base_type == exponent_type:
        return [node.emit(graph.PowOp, [base, node.input(1)])]
    dtype = next(n for t, n in ONNX_TYPES.values() if t == base_type)
    if node.is_const(1):
        exponent = node.const(1, "exponent")
        converted = exponent.astype(dtype)
        if _is_float_element(base_type) or np.array_equal(converted, exponent):
            return [node.emit(graph.PowOp, [base, node.constant(converted, "exponent")])]
    exponent = node.input(1)
    if _is_float_element(base_type):
        return [node.emit(graph.PowOp, [base, node.emit(graph.CastOp, [exponent], to=base_type)])]
    if _is_float_element(exponent_type):
        wide = f64
    else:
        wide = max(base_type, exponent_type, key=lambda t: t.width.data)
    base, exponent = (v if graph.ranked(v.type).get_element_type() == wide else node.emit(graph.CastOp, [v], to=wide)
                      for v in (base, exponent))  # fmt: skip
    return [node.emit(graph.CastOp, [node.emit(graph.PowOp, [base, exponent])], to=base_type)]


@converter("Reciprocal")
def convert_reciprocal(node: Node):
    x = node.input(0)
    return [node.emit(graph.DivOp, [node.scalar(1.0, x), x])]


@converter("LeakyRelu")
def convert_leaky_relu(node: Node):
    x = node.input(0)
    alpha = float(node.attr("alpha", 0.01))
    scaled = node.emit(graph.MulOp, [x, node.scalar(alpha, x)])
    if 0.0 <= alpha <= 1.0:  # then max(x, alpha x) picks x exactly where x > 0
        return [node.emit(graph.MaximumOp, [x, scaled])]
    positive = node.emit(graph.GreaterOp, [x, node.scalar(0.0, x)])
    return [node.emit(graph.WhereOp, [positive, x, scaled])]


@converter("Clip")
def convert_clip(node: Node):
    bounds = {}
    for i, key in ((1, "min"), (2, "max")):
        bound = node.optional_const(i, key)
        if bound is not None:
            bounds[key] = float(np.asarray(bound).reshape(-1)[0])
    return [node.emit(graph.ClipOp, [node.input(0)], **bounds)]


@converter("HardSigmoid", "HardSwish")
def convert_hard_sigmoid(node: Node):
    """clip(alpha * x + beta, 0, 1); HardSwish (MobileNet-v3's) is x times it
    with alpha 1/6 and beta 1/2."""
    x = node.input(0)
    swish = node.op_type == "HardSwish"
    alpha = 1 / 6 if swish else float(node.attr("alpha", 0.2))
    beta = 0.5 if swish else float(node.attr("beta", 0.5))
    scaled = node.emit(graph.AddOp, [node.emit(graph.MulOp, [x, node.scalar(alpha, x)]), node.scalar(beta, x)])
    gate = node.emit(graph.ClipOp, [scaled], min=0.0, max=1.0)
    return [node.emit(graph.MulOp, [x, gate])] if swish else [gate]


@converter("Gelu")
def convert_gelu(node: Node):
    approximate = node.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise node.error(f"unsupported approximate '{approximate}' (none or tanh)")
    return [node.emit(graph.GeluOp, [node.input(0)], approximate=None if approximate == "none" else graph.Approximate.TANH)]


@converter("Where")
def convert_where(node: Node):
    return [node.emit(graph.WhereOp, [node.input(0), node.input(1), node.input(2)])]


@converter("Cast")
def convert_cast(node: Node):
    to = node.attr("to")
    saturate = bool(node.attr("saturate", 1))  # only meaningful for float8 targets
    if to not in ONNX_TYPES:
        raise node.error(f"cast to {onnx_type_name(to)} is not supported ({SUPPORTED_TYPES})")
    if to == TP.FLOAT8E8M0:
        raise node.error("cast to float8e8m0 is not supported (only from it)")
    return [cast_to(node, node.input(0), to, saturate)]


def cast_to(node: Node, x: SSAValue, to: int, saturate: bool) -> SSAValue:
    """`x` converted to ONNX type `to`. To a narrow type (importer.NARROW) the
    conversion is one cast to it (as ml_dtypes' astype) and one back to the type
    that holds it inside; ONNX saturates to float8 by clipping to its largest finite
    value first (NaN stays NaN), as its reference does."""
    source = graph.ranked(x.type).get_element_type()
    target = NARROW[to][0] if to in NARROW else ONNX_TYPES[to][0]
    if node.importer.unsigned_bits_of(x) == 64 and not isinstance(target, IntegerType):
        x = node.emit(graph.CastOp, [x], to=UI64)  # uint64 held in i64: to floats unsigned
    elif to == TP.UINT64 and isinstance(source, AnyFloat):
        return node.emit(graph.CastOp, [node.emit(graph.CastOp, [x], to=UI64)], to=i64)
    if to in NARROW:
        port, wide, _ = NARROW[to]
        if to in SATURATING and saturate:
            if not isinstance(graph.ranked(x.type).get_element_type(), AnyFloat):
                x = node.emit(graph.CastOp, [x], to=wide)
            bound = SATURATING[to]
            x = node.emit(graph.ClipOp, [x], min=-bound, max=bound)
        narrow = node.emit(graph.CastOp, [x], to=port)
        back = node.emit(graph.CastOp, [narrow], to=wide)
        node.importer.narrow_types[back] = to
        node.importer.narrowed[back] = narrow
        return back
    element = ONNX_TYPES[to][0]
    if graph.ranked(x.type).get_element_type() == element:
        return x
    return node.emit(graph.CastOp, [x], to=element)


ONNX_WIDTHS = {TP.BOOL: 8, TP.INT8: 8, TP.UINT8: 8, TP.INT16: 16, TP.UINT16: 16, TP.FLOAT16: 16,
               TP.INT32: 32, TP.UINT32: 32, TP.FLOAT: 32, TP.INT64: 64, TP.UINT64: 64, TP.DOUBLE: 64}  # fmt: skip


@converter("BitCast")
def convert_bitcast(node: Node):
    """The input's bits as the type `to` of the same width. They are taken as a
    signed integer of that width first (a float's by graph.bitcast, an unsigned
    integer's, held widened, by truncation, a bool's as its byte), then made the
    target: a float by graph.bitcast, an unsigned integer widened (the importer
    wraps it), a bool where the byte is not 0."""
    to = node.attr("to")
    x = node.input(0)
    element = node.element_type(0)
    importer = node.importer
    if importer.narrow_type_of(node.raw(0)) is not None or to in NARROW:
        raise node.error("BitCast from or to bfloat16, float8, float4 and 4/2-bit integers is not supported")
    if to not in ONNX_WIDTHS:
        raise node.error(f"BitCast to {onnx_type_name(to)} is not supported")
    unsigned = importer.unsigned_bits_of(node.raw(0))
    width = unsigned or (8 if element == i1 else getattr(element, "bitwidth", 0))
    if width != ONNX_WIDTHS[to]:
        raise node.error(f"BitCast of {width}-bit elements to {onnx_type_name(to)} changes the width")
    signed = IntegerType(width)
    if isinstance(element, AnyFloat):
        bits = node.emit(graph.BitcastOp, [x], to=signed)
    elif element != signed:
        bits = node.emit(graph.CastOp, [x], to=signed)  # truncates a widened unsigned
    else:
        bits = x
    target = ONNX_TYPES[to][0]
    if to == TP.BOOL:
        return [node.emit(graph.CastOp, [bits], to=i1)]
    if isinstance(target, AnyFloat):
        return [node.emit(graph.BitcastOp, [bits], to=target)]
    if target == signed and to != TP.UINT64:
        return [bits]
    return [node.emit(graph.CastOp, [bits], to=target)]  # uintN: widened, wrapped by the importer


@converter("Identity")
def convert_identity(node: Node):
    return [node.raw(0)]


@converter("Dropout")
def convert_dropout(node: Node):
    """Inference: the input unchanged and, if asked for, a mask of all true (bool
    from opset 10; of the input's type, ones, in models written for opset 7-9,
    whose spec leaves the mask unfilled in inference — onnxruntime gives zeros)."""
    node.ignore("seed")
    if node.has_input(2):
        training = node.const(2, "training_mode")
        if bool(np.asarray(training).reshape(-1)[0]):
            raise node.error("training_mode is true; tilecraft imports models for inference")
    node.ignore("ratio")  # opset < 12 carried the ratio as an attribute; unused in inference
    x = node.raw(0)
    if len(node.proto.output) > 1 and node.proto.output[1]:
        if node.importer.source_opset < 10:
            element = node.element_type(0)
            dtype = next(n for t, n in ONNX_TYPES.values() if t == element)
            return [x, np.ones(node.shape(0), dtype=dtype)]
        return [x, np.ones(node.shape(0), dtype=np.bool_)]
    return [x]


# -- comparisons, logic and bits, Mod, IsNaN/IsInf, Sign, CastLike ----------------------
# And/Or/Xor/Not are the bitwise ops on bool; IsNaN is x != x; IsInf compares with
# the infinities; Sign is where(x > 0, 1, where(x < 0, -1, x)) (x itself at 0 and NaN).

LOGIC: dict[str, type[graph.GraphOp]] = {
    "GreaterOrEqual": graph.GreaterEqualOp,
    "LessOrEqual": graph.LessEqualOp,
    "And": graph.BitwiseAndOp,
    "Or": graph.BitwiseOrOp,
    "Xor": graph.BitwiseXorOp,
    "BitwiseAnd": graph.BitwiseAndOp,
    "BitwiseOr": graph.BitwiseOrOp,
    "BitwiseXor": graph.BitwiseXorOp,
}


@converter(*LOGIC)
def convert_logic(node: Node):
    return [node.emit(LOGIC[node.op_type], [node.input(0), node.input(1)])]


@converter("Not", "BitwiseNot")
def convert_not(node: Node):
    return [node.emit(graph.BitwiseNotOp, [node.input(0)])]


def _is_float_element(element) -> bool:
    return not isinstance(element, IntegerType)


@converter("Mod")
def convert_mod(node: Node):
    """fmod=0: the divisor's sign (numpy's mod, graph.mod); fmod=1: the dividend's
    (C's fmod, graph.fmod). Integers and floats alike; ONNX requires fmod=1 for
    floats, but its own tests run fmod=0 on floats as numpy's mod, as here."""
    fmod = int(node.attr("fmod", 0))
    if fmod not in (0, 1):
        raise node.error(f"fmod={fmod} must be 0 or 1")
    a, b = node.input(0), node.input(1)
    return [node.emit(graph.FmodOp if fmod else graph.ModOp, [a, b])]


@converter("IsNaN")
def convert_isnan(node: Node):
    x = node.input(0)
    if not _is_float_element(node.element_type(0)):
        raise node.error("IsNaN takes floating-point elements")
    return [node.emit(graph.NotEqualOp, [x, x])]


@converter("IsInf")
def convert_isinf(node: Node):
    x = node.input(0)
    if not _is_float_element(node.element_type(0)):
        raise node.error("IsInf takes floating-point elements")
    tests = []
    if int(node.attr("detect_positive", 1)):
        tests.append(node.emit(graph.EqualOp, [x, node.scalar(np.inf, x)]))
    if int(node.attr("detect_negative", 1)):
        tests.append(node.emit(graph.EqualOp, [x, node.scalar(-np.inf, x)]))
    if not tests:  # neither: all false
        return [node.emit(graph.LessOp, [x, x])]  # x < x: false, NaN too
    result = tests[0]
    for t in tests[1:]:
        result = node.emit(graph.BitwiseOrOp, [result, t])
    return [result]


@converter("Sign")
def convert_sign(node: Node):
    x = node.input(0)
    positive = node.emit(graph.GreaterOp, [x, node.scalar(0, x)])
    negative = node.emit(graph.LessOp, [x, node.scalar(0, x)])
    inner = node.emit(graph.WhereOp, [negative, node.scalar(-1, x), x])
    return [node.emit(graph.WhereOp, [positive, node.scalar(1, x), inner])]


@converter("CastLike")
def convert_cast_like(node: Node):
    saturate = bool(node.attr("saturate", 1))  # only meaningful for float8 targets
    element = node.element_type(1)
    narrow = node.importer.narrow_type_of(node.raw(1))
    if node.is_const(0):
        # A constant cast like a run-time tensor (the -inf of an expanded Attention)
        # stays known: only the target's element type is needed, not its values.
        bits = node.importer.unsigned_bits_of(node.raw(1))
        if narrow is not None:
            x = node.raw(0)
            if narrow in SATURATING and saturate:
                x = np.clip(x, -SATURATING[narrow], SATURATING[narrow])
            return [x.astype(NARROW[narrow][2])]
        dtype = {b: n for n, b in UNSIGNED_BITS.items()}[bits] if bits else next(n for t, n in ONNX_TYPES.values() if t == element)
        return [node.raw(0).astype(dtype)]
    x = node.input(0)
    if narrow is not None:
        if narrow == TP.FLOAT8E8M0:
            raise node.error("cast to float8e8m0 is not supported (only from it)")
        return [cast_to(node, x, narrow, saturate)]
    if node.element_type(0) == element:
        return [x]
    return [node.emit(graph.CastOp, [x], to=element)]


@converter("BitShift")
def convert_bit_shift(node: Node):
    """Shifts as products and floor divisions by 2^y, computed in int64: x << y is
    x * 2^y wrapped to x's width, x >> y is floor(x / 2^y) (arithmetic for signed
    x). For int64, 2^63 wraps to the most negative value: the product still has
    the right bits, and x >> 63 is taken apart (-1 or 0). 2^y is the product of the
    factors 2^(2^k) for the bits k of y. A shift by a negative amount or by the width
    or more gives 0, or -1 for a right shift of a negative x (the sign fills it), as
    the ONNX reference does. Unsigned operands are held widened and non-negative by
    the importer (see importer.UNSIGNED), which also wraps the result."""
    direction = node.attr("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise node.error(f"unsupported direction '{direction}' (LEFT or RIGHT)")
    element = node.element_type(0)
    unsigned = node.importer.unsigned_bits_of(node.raw(0))
    width = unsigned or (element.width.data if isinstance(element, IntegerType) else None)
    if width is None or width == 1:
        raise node.error(f"BitShift of {element} elements is not supported (integers)")
    x = node.emit(graph.CastOp, [node.input(0)], to=i64)
    y = node.emit(graph.CastOp, [node.input(1)], to=i64)
    outside = node.emit(graph.BitwiseOrOp, [node.emit(graph.LessOp, [y, node.scalar(0, y)]),
                                            node.emit(graph.GreaterEqualOp, [y, node.scalar(width, y)])])
    y = node.emit(graph.WhereOp, [outside, node.scalar(0, y), y])
    power = None
    for k in range((width - 1).bit_length()):
        bit = node.emit(graph.ModOp, [node.emit(graph.DivOp, [y, node.scalar(1 << k, y)]), node.scalar(2, y)])
        factor = node.emit(graph.WhereOp, [node.emit(graph.EqualOp, [bit, node.scalar(1, y)]),
                                           node.scalar(1 << (1 << k), y), node.scalar(1, y)])
        power = factor if power is None else node.emit(graph.MulOp, [power, factor])
    zero = node.scalar(0, x)
    if direction == "LEFT":
        shifted, fill = node.emit(graph.MulOp, [x, power]), zero
    else:
        exact = node.emit(graph.SubOp, [x, node.emit(graph.ModOp, [x, power])])
        shifted = node.emit(graph.DivOp, [exact, power])
        fill = node.emit(graph.WhereOp, [node.emit(graph.LessOp, [x, zero]), node.scalar(-1, x), zero])
        if width == 64:  # 2^63 wrapped negative: x >> 63 is the sign fill
            shifted = node.emit(graph.WhereOp, [node.emit(graph.EqualOp, [y, node.scalar(63, y)]), fill, shifted])
    result = node.emit(graph.WhereOp, [outside, fill, shifted])
    return [node.emit(graph.CastOp, [result], to=element)]


# -- unary math (Sin ... Round) ---------------------------------------------------------

MATH: dict[str, type[graph.GraphOp]] = {
    "Sin": graph.SinOp,
    "Cos": graph.CosOp,
    "Tan": graph.TanOp,
    "Asin": graph.AsinOp,
    "Acos": graph.AcosOp,
    "Atan": graph.AtanOp,
    "Sinh": graph.SinhOp,
    "Cosh": graph.CoshOp,
    "Asinh": graph.AsinhOp,
    "Acosh": graph.AcoshOp,
    "Atanh": graph.AtanhOp,
    "Floor": graph.FloorOp,
    "Ceil": graph.CeilOp,
    "Round": graph.RoundOp,  # halves to even, as ONNX
}


@converter(*MATH)
def convert_math(node: Node):
    element = node.element_type(0)
    if not _is_float_element(element):
        raise node.error(f"{node.op_type} takes floating-point elements, not {element}")
    return [node.emit(MATH[node.op_type], [node.input(0)])]
