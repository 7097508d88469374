"""Casts from and to the narrow float types (bfloat16, float8, float4) as integer
bit arithmetic, the way te emits them.

These types are storage only (te computes in f32): a value of one is read from or
written to a buffer and converted. LLVM (through llvmlite) has no `bfloat` and no
8- or 4-bit floats, so no conversion instruction is used; a narrow value is
reinterpreted (`arith.bitcast`) as the integer of its width, which is also how the
LLVM backend holds it, and converted with shifts, masks and selects on i32, which
vectorize like any other integer code. The results are bit for bit those of
ml_dtypes' `astype` (and so of ONNX's reference): round to nearest even, with
subnormals; NaN and infinity as each format has them:

| format           | E, M, bias | overflow, inf | NaN           | -0  |
|------------------|------------|---------------|---------------|-----|
| bfloat16         | 8, 7, 127  | inf           | S.0xFF.1000000| yes |
| float8_e5m2      | 5, 2, 15   | inf           | S.11111.10    | yes |
| float8_e4m3fn    | 4, 3, 7    | NaN           | S.1111.111    | yes |
| float8_e4m3fnuz  | 4, 3, 8    | NaN           | 0x80 only     | no  |
| float8_e5m2fnuz  | 5, 2, 16   | NaN           | 0x80 only     | no  |
| float4_e2m1fn    | 2, 1, 1    | the largest   | (none: +-0)   | yes |
| float8_e8m0fnu   | 8, 0, 127  | (decode only) | 0xFF          | no  |

Encoding f32 -> narrow (`x` its bits, `a` = |x|'s): where the target exponent is
normal, re-bias the exponent (subtract (127 - bias) << 23) and round the 23-bit
mantissa to M bits to nearest even, `(w + 2^(s-1) - 1 + ((w >> s) & 1)) >> s` with
s = 23 - M; a carry out of the mantissa steps the exponent, as it should. Below,
the significand with its implicit bit is shifted right by as much more as the
exponent falls short, rounded the same way (which may give the smallest normal).
A code above the largest finite one overflowed. Other sources go through f32
first, as ml_dtypes does (so an f64 just off a tie of the narrow type, which f32
rounds onto the tie, then rounds to even: ml_dtypes' answer, not the nearest).
Decoding: a normal code is re-biased back, a subnormal one is its mantissa times
2^(1 - bias - M) in f32 (exact).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, f32, i32
from xdsl.ir import Operation, SSAValue

from tilecraft.frontends.te.dtypes import _ir_type, _width

IEEE, FN, FNUZ, FINITE, E8M0 = "ieee", "fn", "fnuz", "finite", "e8m0"


@dataclass(frozen=True)
class FloatFormat:
    exponent_bits: int
    mantissa_bits: int
    bias: int
    specials: str  # IEEE | FN | FNUZ | FINITE | E8M0 (see the table above)

    @property
    def sign_shift(self) -> int:
        return self.exponent_bits + self.mantissa_bits

    @property
    def max_code(self) -> int:
        """The code of the largest finite magnitude."""
        top = ((1 << self.exponent_bits) - 1) << self.mantissa_bits
        full = (1 << self.sign_shift) - 1
        return {IEEE: top - 1, FN: full - 1, FNUZ: full, FINITE: full, E8M0: 0xFE}[self.specials]


FORMATS: dict[str, FloatFormat] = {
    "bfloat16": FloatFormat(8, 7, 127, IEEE),
    "float8_e5m2": FloatFormat(5, 2, 15, IEEE),
    "float8_e4m3fn": FloatFormat(4, 3, 7, FN),
    "float8_e4m3fnuz": FloatFormat(4, 3, 8, FNUZ),
    "float8_e5m2fnuz": FloatFormat(5, 2, 16, FNUZ),
    "float4_e2m1fn": FloatFormat(2, 1, 1, FINITE),
    "float8_e8m0fnu": FloatFormat(8, 0, 127, E8M0),
}
_QUIET_NAN = 0x7FC00000


class _Bits:
    """Builds i32 (and a few f32) arith ops through `add`."""

    def __init__(self, add: Callable[[Operation], SSAValue]):
        self.add = add

    def c(self, value: int) -> SSAValue:
        return self.add(arith.ConstantOp(IntegerAttr(value - (1 << 32) if value >= 1 << 31 else value, i32)))

    def _int(self, value: SSAValue | int) -> SSAValue:
        return self.c(value) if isinstance(value, int) else value

    def and_(self, a, b):
        return self.add(arith.AndIOp(self._int(a), self._int(b)))

    def or_(self, a, b):
        return self.add(arith.OrIOp(self._int(a), self._int(b)))

    def add_(self, a, b):
        return self.add(arith.AddiOp(self._int(a), self._int(b)))

    def sub(self, a, b):
        return self.add(arith.SubiOp(self._int(a), self._int(b)))

    def shl(self, a, b):
        return self.add(arith.ShLIOp(self._int(a), self._int(b)))

    def shr(self, a, b):  # logical
        return self.add(arith.ShRUIOp(self._int(a), self._int(b)))

    def min_(self, a, b):
        return self.add(arith.MinSIOp(self._int(a), self._int(b)))

    def max_(self, a, b):
        return self.add(arith.MaxSIOp(self._int(a), self._int(b)))

    def cmp(self, predicate: str, a, b):
        return self.add(arith.CmpiOp(self._int(a), self._int(b), predicate))

    def select(self, cond, a, b):
        return self.add(arith.SelectOp(cond, self._int(a), self._int(b)))

    def round_even(self, w: SSAValue, shift: SSAValue | int) -> SSAValue:
        """w >> shift rounded to nearest, ties to even (w >= 0, shift >= 1)."""
        half_minus_one = self.sub(self.shl(1, self.sub(shift, 1)), 1)
        odd = self.and_(self.shr(w, shift), 1)
        return self.shr(self.add_(self.add_(w, half_minus_one), odd), shift)


def encode(f: SSAValue, dst: str, add: Callable[[Operation], SSAValue]) -> SSAValue:
    """The f32 `f` rounded to the narrow float type `dst` (ml_dtypes' astype)."""
    fmt = FORMATS[dst]
    if fmt.specials == E8M0:
        raise ValueError("casts to float8_e8m0fnu are not supported (only from it)")
    b = _Bits(add)
    bits = add(arith.BitcastOp(f, i32))
    a = b.and_(bits, 0x7FFFFFFF)
    sign = b.shr(bits, 31)
    is_nan = b.cmp("sgt", a, 0x7F800000)
    m = fmt.mantissa_bits
    s = 23 - m
    rebias = 127 - fmt.bias
    normal = b.round_even(b.sub(a, rebias << 23), s) if rebias else b.round_even(a, s)
    if rebias:  # the target's subnormals are f32 normals: round them apart
        e32 = b.shr(a, 23)
        implicit = b.select(b.cmp("sgt", e32, 0), 0x800000, 0)
        significand = b.or_(b.and_(a, 0x7FFFFF), implicit)
        shift = b.sub(s + rebias + 1, b.max_(e32, 1))
        sub = b.round_even(significand, b.max_(b.min_(shift, 31), 1))
        code = b.select(b.cmp("sge", a, (rebias + 1) << 23), normal, sub)
    else:  # same exponent range as f32 (bfloat16): one rounding covers all
        code = normal
    over = b.cmp("sgt", code, fmt.max_code)
    sign_bit = b.shl(sign, fmt.sign_shift)
    if fmt.specials == IEEE:
        infinity = ((1 << fmt.exponent_bits) - 1) << m
        code = b.select(over, infinity, code)
        code = b.select(is_nan, infinity | 1 << (m - 1), code)  # the quiet NaN, signed
        code = b.or_(code, sign_bit)
    elif fmt.specials == FN:
        code = b.select(b.or_(over, is_nan), fmt.max_code + 1, code)
        code = b.or_(code, sign_bit)
    elif fmt.specials == FNUZ:  # one NaN, 0x80; no -0
        signed = b.select(b.cmp("eq", code, 0), 0, b.or_(code, sign_bit))
        code = b.select(b.or_(over, is_nan), 0x80, signed)
    else:  # FINITE: overflow saturates; NaN becomes the zero of the other sign (ml_dtypes)
        code = b.or_(b.select(over, fmt.max_code, code), sign_bit)
        nan_code = b.select(b.cmp("eq", sign, 0), 1 << fmt.sign_shift, 0)
        code = b.select(is_nan, nan_code, code)
    width = _width(dst)
    narrow = add(arith.TruncIOp(code, IntegerType(width)))
    return add(arith.BitcastOp(narrow, _ir_type(dst)))


def decode(x: SSAValue, src: str, add: Callable[[Operation], SSAValue]) -> SSAValue:
    """The narrow float `x` of type `src` as an f32 (exact)."""
    fmt = FORMATS[src]
    b = _Bits(add)
    width = _width(src)
    code = add(arith.ExtUIOp(add(arith.BitcastOp(x, IntegerType(width))), i32))
    m = fmt.mantissa_bits
    if fmt.specials == E8M0:  # 2^(code - 127); 0 is 2^-127 (an f32 subnormal)
        bits = b.select(b.cmp("eq", code, 0), 0x00400000, b.shl(code, 23))
        bits = b.select(b.cmp("eq", code, 0xFF), _QUIET_NAN, bits)
        return add(arith.BitcastOp(bits, f32))
    if fmt.bias == 127:  # bfloat16: the upper half of an f32
        return add(arith.BitcastOp(b.shl(code, 16), f32))
    magnitude = b.and_(code, (1 << fmt.sign_shift) - 1)
    exponent = b.shr(magnitude, m)
    normal = b.add_(b.shl(magnitude, 23 - m), (127 - fmt.bias) << 23)
    scale = add(arith.ConstantOp(FloatAttr(2.0 ** (1 - fmt.bias - m), f32)))
    subnormal = add(arith.MulfOp(add(arith.SIToFPOp(magnitude, f32)), scale))
    bits = b.select(b.cmp("eq", exponent, 0), add(arith.BitcastOp(subnormal, i32)), normal)
    if fmt.specials == IEEE:
        top = (1 << fmt.exponent_bits) - 1
        special = b.select(b.cmp("eq", magnitude, top << m), 0x7F800000, _QUIET_NAN)
        bits = b.select(b.cmp("eq", exponent, top), special, bits)
    elif fmt.specials == FN:
        bits = b.select(b.cmp("eq", magnitude, (1 << fmt.sign_shift) - 1), _QUIET_NAN, bits)
    bits = b.or_(bits, b.shl(b.shr(code, fmt.sign_shift), 31))
    if fmt.specials == FNUZ:
        bits = b.select(b.cmp("eq", code, 0x80), _QUIET_NAN | 1 << 31, bits)  # as ml_dtypes
    return add(arith.BitcastOp(bits, f32))


def convert(x: SSAValue, src: str, dst: str, cast: Callable[[SSAValue, str, str], SSAValue],
            add: Callable[[Operation], SSAValue]) -> SSAValue:  # fmt: skip
    """`x` of te dtype `src` as `dst`, one of them a narrow float; `cast` converts
    between the other dtypes (the emitter's own casts)."""
    if src in FORMATS:
        f = decode(x, src, add)
        return f if dst == "float32" else cast(f, "float32", dst)
    return encode(x if src == "float32" else cast(x, src, "float32"), dst, add)

