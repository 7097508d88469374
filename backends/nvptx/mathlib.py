"""Math functions in GPU kernels, with no libm and no libdevice to call.

LLVM's NVPTX backend has no library to call: an `llvm.log.f32` it cannot
expand aborts code generation ("no libcall available"). So the kernels'
`math` ops lower through the CPU path's table (`backends/llvm/ops.py`) with
these replaced, each written in plain arithmetic (`backends/llvm/mathfuncs.py`):

  f32 exp, tanh, erf      the CPU path's polynomials (the CPU uses them too)
  f32 log, log2, log10    Cephes' log polynomial (log2, log10: times a constant)
  f32 exp2                2^n e^(f ln2), n the nearest integer
  f32 sin, cos            Cephes' reduction by pi/4 and polynomials
  f32 pow                 exp(y log|x|) with C's special cases

sqrt (`sqrt.rn`), rsqrt, abs, fma, floor, ceil, trunc, roundeven are PTX
instructions for f32 and f64 alike and keep the CPU lowering. f64 exp, log,
tanh, erf, sin, cos, pow have no GPU lowering yet (`convert-gpu-to-nvvm`
rejects them at the op): the CPU path calls libm for those.
"""

from __future__ import annotations

from collections.abc import Callable

from tilecraft.backends.llvm.builder import element_of
from tilecraft.backends.llvm.mathfuncs import (
    FloatMath,
    cos_f32,
    erf_f32,
    exp2_f32,
    exp_f32,
    log_f32,
    pow_f32,
    sin_f32,
    tanh_f32,
)
from tilecraft.backends.llvm.ops import HANDLERS, Handler, OpLowering
from xdsl.dialects import math
from xdsl.dialects.builtin import Float32Type
from xdsl.ir import Attribute, Operation, SSAValue

_LOG2_E = 1.4426950408889634
_LOG10_E = 0.4342944819032518


def _f32(formula: Callable[..., SSAValue]) -> Handler:
    def lower(lw: OpLowering, op: Operation, args: list[SSAValue], rt: Attribute) -> SSAValue:
        assert isinstance(element_of(rt), Float32Type), "checked by convert-gpu-to-nvvm"
        return formula(FloatMath(lw.b, rt), *args)

    return lower


F32_FORMULAS: dict[type[Operation], Callable[..., SSAValue]] = {
    math.ExpOp: exp_f32,
    math.TanhOp: tanh_f32,
    math.ErfOp: erf_f32,
    math.LogOp: log_f32,
    math.Log2Op: lambda m, x: m.mul(log_f32(m, x), m.c(_LOG2_E)),
    math.Log10Op: lambda m, x: m.mul(log_f32(m, x), m.c(_LOG10_E)),
    math.Exp2Op: exp2_f32,
    math.SinOp: sin_f32,
    math.CosOp: cos_f32,
    math.PowFOp: pow_f32,
}
"""The math ops a kernel computes in f32 only, by formula."""

GPU_HANDLERS: dict[type[Operation], Handler] = {
    **HANDLERS,
    **{op: _f32(formula) for op, formula in F32_FORMULAS.items()},
}
"""`backends/llvm/ops.py`'s table with the f32 formulas for GPU kernels."""


__all__ = ["F32_FORMULAS", "GPU_HANDLERS"]
