"""The double-to-half conversion that LLVM leaves to a runtime library call.

LLVM lowers `fptrunc double to half` to a call of compiler-rt's `__truncdfhf2`.
A JIT process has no compiler-rt, so that call would jump nowhere (a crash).
`add_half_conversions` defines it in the module itself (weak, so a runtime
library that has it wins), correctly rounded to nearest even as numpy rounds:
first to float rounding to odd (truncate toward zero, then set the last bit if
anything was dropped), then to half. With 24 bits in between, at least two more
than half's 11, the second rounding decides exactly as one rounding would (no
double-rounding error).

Float to half and back uses the CPU's own conversions (F16C, x86-64-v3).
"""

from __future__ import annotations

_ROUND_TO_ODD = """
define internal float @tc.f64_to_f32_odd(double %x) alwaysinline {
entry:
  %t = fptrunc double %x to float
  %back = fpext float %t to double
  %exact = fcmp oeq double %back, %x
  br i1 %exact, label %done, label %odd
odd:
  %bits = bitcast float %t to i32
  %tabs = call double @llvm.fabs.f64(double %back)
  %xabs = call double @llvm.fabs.f64(double %x)
  %away = fcmp ogt double %tabs, %xabs
  %less = sub i32 %bits, 1
  %toward_zero = select i1 %away, i32 %less, i32 %bits
  %odd_bits = or i32 %toward_zero, 1
  %r = bitcast i32 %odd_bits to float
  br label %done
done:
  %res = phi float [ %t, %entry ], [ %r, %odd ]
  ret float %res
}

declare double @llvm.fabs.f64(double)
"""

_TO_HALF = """
define weak half @__truncdfhf2(double %x) {
  %f = call float @tc.f64_to_f32_odd(double %x)
  %r = fptrunc float %f to half
  ret half %r
}
"""


def add_half_conversions(text: str) -> str:
    """`text` (an LLVM IR module) with the conversion routines appended when it
    uses `half` and does not define them already."""
    if "half" not in text:
        return text
    if "@tc.f64_to_f32_odd" in text:
        return text
    return text + _ROUND_TO_ODD + _TO_HALF
