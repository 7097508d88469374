"""`arith` and `math` ops to LLVM instructions, on scalars and on vectors alike.

Each handler receives operands that are all scalars or all `<W x T>` vectors (the
caller broadcasts uniform operands in a vector context) and the LLVM result
type, and returns one LLVM value. LLVM instructions and intrinsics are
overloaded on vector types, so most handlers do not care which they get.

Float arithmetic carries the fast-math flags the pass was given (`contract`, so
`a * b + c` becomes an FMA, and `reassoc` by default, so LLVM may vectorize
reductions). Ops without a single LLVM counterpart are expanded here:
`floordivsi`/`ceildivsi` (from sdiv and srem), `rsqrt` (1 / sqrt); f32 `exp`,
`tanh` and `erf` are polynomials that stay vectors (`mathfuncs.py`), f64 `erf` is
a call of libm's `erf` per lane. Integer division never traps: by zero it gives 0
and MIN / -1 wraps, as in numpy (`_safe_divisor`).
(Under a mask, `loop-vectorize` has already made inactive lanes divide by one.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tilecraft.dialects import llvmx
from tilecraft.backends.llvm.builder import (
    FunctionBuilder,
    element_of,
    mangle,
    width_of,
)
from tilecraft.dialects.llvmx import FCMP_PREDICATES
from tilecraft.backends.llvm.mathfuncs import FloatMath, erf_f32, exp_f32, tanh_f32
from xdsl.dialects import arith, llvm, math
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType, VectorType, f32, i1, i64
from xdsl.ir import Attribute, Operation, SSAValue


@dataclass
class OpLowering:
    """What a handler needs besides its operands."""

    b: FunctionBuilder
    fastmath: llvm.FastMathAttr
    declare: Callable[[str, Sequence[Attribute], Attribute | None], None]


Handler = Callable[[OpLowering, Operation, list[SSAValue], Attribute], SSAValue]


def _binary(op_class: type[Operation]) -> Handler:
    return lambda lw, op, args, rt: lw.b.add(op_class(args[0], args[1]))


def _float_binary(op_class: type[Operation]) -> Handler:
    return lambda lw, op, args, rt: lw.b.add(op_class(args[0], args[1], lw.fastmath))


def _cast(op_class: type[Operation]) -> Handler:
    return lambda lw, op, args, rt: lw.b.add(op_class(args[0], rt))


def _unary_intrinsic_op(op_class: type[Operation]) -> Handler:
    return lambda lw, op, args, rt: lw.b.add(op_class(args[0]))


def _intrinsic(name: str) -> Handler:
    """A call of the overloaded intrinsic `llvm.<name>.<type>`."""
    return lambda lw, op, args, rt: lw.b.intrinsic(f"llvm.{name}.{mangle(rt)}", args, rt)


_SIGNED_DIVISIONS = (arith.DivSIOp, arith.RemSIOp, arith.FloorDivSIOp, arith.CeilDivSIOp)
_REMAINDERS = (arith.RemSIOp, arith.RemUIOp)


def _safe_divisor(
    lw: OpLowering, op: Operation, a: SSAValue, d: SSAValue, rt: Attribute
) -> tuple[SSAValue, SSAValue | None]:
    """The divisor to divide by without trapping, and where the quotient must be 0.

    Integer division in tilecraft's IR never traps: by zero, every division and
    remainder is 0 (numpy's convention; LLVM's sdiv/udiv by zero is undefined and
    traps with SIGFPE on x86), and the signed overflow MIN / -1 wraps to MIN with
    remainder 0 (numpy again). Both are had by dividing by 1 instead, then zeroing
    the quotient of a division by zero. A constant divisor other than 0 and -1 needs
    no select, so index arithmetic (`i // 32`) is unchanged."""
    b = lw.b
    known = b.known.get(d)
    signed = isinstance(op, _SIGNED_DIVISIONS)
    if known is not None and known != 0 and not (signed and known == -1):
        return d, None
    width = element_of(rt).width.data
    is_zero = b.icmp("eq", d, b.const(0, rt))
    bad = is_zero
    if signed:
        overflow = b.add(
            llvm.AndOp(b.icmp("eq", a, b.const(-(2 ** (width - 1)), rt)), b.icmp("eq", d, b.const(-1, rt)))
        )
        bad = b.add(llvm.OrOp(is_zero, overflow))
    safe = b.select(bad, b.const(1, rt), d)
    # A remainder by 1 is already 0.
    return safe, None if isinstance(op, _REMAINDERS) else is_zero


def _division(op_class: type[Operation]) -> Handler:
    def lower(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
        d, is_zero = _safe_divisor(lw, op, args[0], args[1], rt)
        result = lw.b.add(op_class(args[0], d))
        return result if is_zero is None else lw.b.select(is_zero, lw.b.const(0, rt), result)

    return lower


def _rounding_division(
    lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute
) -> SSAValue:
    """floordivsi/ceildivsi: the quotient rounded down/up instead of toward zero."""
    b = lw.b
    a = args[0]
    d, is_zero = _safe_divisor(lw, op, a, args[1], rt)
    quotient = b.add(llvm.SDivOp(a, d))
    remainder = b.add(llvm.SRemOp(a, d))
    zero = b.const(0, rt)
    inexact = b.icmp("ne", remainder, zero)
    # The exact quotient is negative when remainder and divisor differ in sign.
    signs = b.add(llvm.XOrOp(remainder, d))
    if isinstance(op, arith.FloorDivSIOp):
        adjust = b.add(llvm.AndOp(inexact, b.icmp("slt", signs, zero)))
        result = b.select(adjust, b.isub(quotient, b.const(1, rt)), quotient)
    else:
        adjust = b.add(llvm.AndOp(inexact, b.icmp("sge", signs, zero)))
        result = b.select(adjust, b.iadd(quotient, b.const(1, rt)), quotient)
    return result if is_zero is None else b.select(is_zero, zero, result)


def _cmpi(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
    assert isinstance(op, arith.CmpiOp)
    # arith and llvm number the integer predicates the same way.
    predicate = list(llvm.ICmpPredicateFlag)[op.predicate.value.data].value
    return lw.b.icmp(predicate, args[0], args[1])


def _cmpf(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
    assert isinstance(op, arith.CmpfOp)
    predicate = FCMP_PREDICATES[op.predicate.value.data]
    if isinstance(rt, VectorType):  # xDSL's llvm.fcmp takes scalars only
        return lw.b.add(llvmx.FCmpOp(predicate, args[0], args[1]))
    if predicate in ("false", "true"):
        predicate = "_" + predicate
    return lw.b.add(llvm.FCmpOp(args[0], args[1], predicate))


def _select(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
    return lw.b.select(args[0], args[1], args[2])


def _int_resize(signed: bool) -> Handler:
    """index_cast/extsi/extui/trunci: extend or truncate to the result's width."""

    def lower(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
        source = element_of(args[0].type)
        target = element_of(rt)
        assert isinstance(source, IntegerType) and isinstance(target, IntegerType)
        if source.width.data == target.width.data:
            return args[0]
        if source.width.data > target.width.data:
            return lw.b.add(llvm.TruncOp(args[0], rt))
        if signed:
            return lw.b.add(llvm.SExtOp(args[0], rt))
        return lw.b.add(llvm.ZExtOp(args[0], rt))

    return lower


def _bitcast(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
    """A narrow float (bf16, float8) is already held as its integer (`scalar_type`)."""
    if args[0].type == rt:
        return args[0]
    return lw.b.add(llvm.BitcastOp(args[0], rt))


def _negf(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
    return lw.b.add(llvm.FNegOp(args[0], lw.fastmath))


def _rsqrt(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
    root = lw.b.add(llvm.FSqrtOp(args[0]))
    return lw.b.add(llvm.FDivOp(lw.b.const(1.0, rt), root, lw.fastmath))


def _fma(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
    return lw.b.add(llvm.FMAOp(args[0], args[1], args[2]))


def _f32_or(libm: Handler, formula: Callable[[FloatMath, SSAValue], SSAValue]) -> Handler:
    """`formula` (see mathfuncs.py) for f32, `libm` for other types."""

    def lower(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
        if isinstance(element_of(rt), Float32Type):
            return formula(FloatMath(lw.b, rt), args[0])
        return libm(lw, op, args, rt)

    return lower


def _libm_per_lane(lw: OpLowering, name: str, x: SSAValue, rt: Attribute) -> SSAValue:
    """Call libm's scalar `name` (f64) once per lane."""
    elem = element_of(rt)
    lw.declare(name, [elem], elem)
    width = width_of(rt)
    if width is None:
        return lw.b.call(name, [x], elem)  # type: ignore[return-value]
    result = lw.b.undef(rt)
    for lane in range(width):
        value = lw.b.call(name, [lw.b.extract(x, lane)], elem)
        result = lw.b.add(llvm.InsertElementOp(result, value, lw.b.const(lane, i64)))
    return result


def _libm(name: str) -> Handler:
    """libm's `name` (f64) or `name`f (f32) per lane; f16 lanes go through f32.
    For the functions LLVM has no intrinsic for (asinh, acosh, atanh)."""

    def lower(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
        elem = element_of(rt)
        if isinstance(elem, Float64Type):
            return _libm_per_lane(lw, name, args[0], rt)
        if isinstance(elem, Float32Type):
            return _libm_per_lane(lw, name + "f", args[0], rt)
        width = width_of(rt)
        wide = f32 if width is None else VectorType(f32, [width])
        x = lw.b.add(llvm.FPExtOp(args[0], wide))
        return lw.b.add(llvm.FPTruncOp(_libm_per_lane(lw, name + "f", x, wide), rt))

    return lower


HANDLERS: dict[type[Operation], Handler] = {
    arith.AddiOp: lambda lw, op, args, rt: lw.b.iadd(args[0], args[1]),
    arith.SubiOp: lambda lw, op, args, rt: lw.b.isub(args[0], args[1]),
    arith.MuliOp: lambda lw, op, args, rt: lw.b.imul(args[0], args[1]),
    arith.DivSIOp: _division(llvm.SDivOp),
    arith.DivUIOp: _division(llvm.UDivOp),
    arith.RemSIOp: _division(llvm.SRemOp),
    arith.RemUIOp: _division(llvm.URemOp),
    arith.FloorDivSIOp: _rounding_division,
    arith.CeilDivSIOp: _rounding_division,
    arith.MaxSIOp: _intrinsic("smax"),
    arith.MinSIOp: _intrinsic("smin"),
    arith.MaxUIOp: _intrinsic("umax"),
    arith.MinUIOp: _intrinsic("umin"),
    arith.AndIOp: _binary(llvm.AndOp),
    arith.OrIOp: _binary(llvm.OrOp),
    arith.XOrIOp: _binary(llvm.XOrOp),
    arith.ShLIOp: _binary(llvm.ShlOp),
    arith.ShRSIOp: _binary(llvm.AShrOp),
    arith.ShRUIOp: _binary(llvm.LShrOp),
    arith.CmpiOp: _cmpi,
    arith.CmpfOp: _cmpf,
    arith.SelectOp: _select,
    arith.AddfOp: _float_binary(llvm.FAddOp),
    arith.SubfOp: _float_binary(llvm.FSubOp),
    arith.MulfOp: _float_binary(llvm.FMulOp),
    arith.DivfOp: _float_binary(llvm.FDivOp),
    arith.NegfOp: _negf,
    arith.MaximumfOp: _intrinsic("maximum"),
    arith.MinimumfOp: _intrinsic("minimum"),
    arith.MaxnumfOp: _intrinsic("maxnum"),
    arith.MinnumfOp: _intrinsic("minnum"),
    arith.SIToFPOp: _cast(llvm.SIToFPOp),
    arith.UIToFPOp: _cast(llvmx.UIToFPOp),
    arith.FPToSIOp: _cast(llvmx.FPToSIOp),
    arith.FPToUIOp: _cast(llvmx.FPToUIOp),
    arith.ExtFOp: _cast(llvm.FPExtOp),
    arith.TruncFOp: _cast(llvm.FPTruncOp),
    arith.ExtSIOp: _int_resize(signed=True),
    arith.ExtUIOp: _int_resize(signed=False),
    arith.TruncIOp: _int_resize(signed=True),
    arith.BitcastOp: _bitcast,
    arith.IndexCastOp: _int_resize(signed=True),
    math.ExpOp: _f32_or(_unary_intrinsic_op(llvm.FExpOp), exp_f32),
    math.Exp2Op: _unary_intrinsic_op(llvm.FExp2Op),
    math.LogOp: _unary_intrinsic_op(llvm.FLogOp),
    math.Log2Op: _unary_intrinsic_op(llvm.FLog2Op),
    math.Log10Op: _intrinsic("log10"),
    math.SqrtOp: _unary_intrinsic_op(llvm.FSqrtOp),
    math.RsqrtOp: _rsqrt,
    math.TanhOp: _f32_or(_intrinsic("tanh"), tanh_f32),
    math.ErfOp: _f32_or(lambda lw, op, args, rt: _libm_per_lane(lw, "erf", args[0], rt), erf_f32),
    math.AbsFOp: lambda lw, op, args, rt: lw.b.add(llvm.FAbsOp(args[0], rt)),
    # The second operand says whether abs(INT_MIN) is poison: it is not.
    math.AbsIOp: lambda lw, op, args, rt: lw.b.intrinsic(
        f"llvm.abs.{mangle(rt)}", [args[0], lw.b.const(0, i1)], rt
    ),
    math.PowFOp: lambda lw, op, args, rt: lw.b.add(llvm.FPowOp(args[0], args[1])),
    math.FmaOp: _fma,
    math.FloorOp: _unary_intrinsic_op(llvm.FFloorOp),
    math.CeilOp: _unary_intrinsic_op(llvm.FCeilOp),
    math.RoundOp: _intrinsic("round"),
    math.RoundEvenOp: _intrinsic("roundeven"),
    math.TruncOp: _intrinsic("trunc"),
    math.SinOp: _unary_intrinsic_op(llvm.FSinOp),
    math.CosOp: _unary_intrinsic_op(llvm.FCosOp),
    # LLVM's intrinsics of these become libm calls, per lane on vectors.
    math.TanOp: _intrinsic("tan"),
    math.AsinOp: _intrinsic("asin"),
    math.AcosOp: _intrinsic("acos"),
    math.AtanOp: _intrinsic("atan"),
    math.SinhOp: _intrinsic("sinh"),
    math.CoshOp: _intrinsic("cosh"),
    math.AsinhOp: _libm("asinh"),
    math.AcoshOp: _libm("acosh"),
    math.AtanhOp: _libm("atanh"),
    math.CopySignOp: lambda lw, op, args, rt: lw.b.add(llvm.FCopySignOp(args[0], args[1])),
}
