"""numpy dtypes of IR types, shared by the evaluators, the folders and the runtime."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute

# Storage-only element types: ports and buffers hold them (one ml_dtypes array
# element each: two bytes for bfloat16, one byte for the others, a 4- or 2-bit
# integer in the low bits of its byte); computation converts them to f32 or i8
# first (frontends/te/narrow.py).
NARROW_FLOATS: dict[type[Attribute], np.dtype] = {
    BFloat16Type: np.dtype(ml_dtypes.bfloat16),
    Float8E4M3FNType: np.dtype(ml_dtypes.float8_e4m3fn),
    Float8E4M3FNUZType: np.dtype(ml_dtypes.float8_e4m3fnuz),
    Float8E5M2Type: np.dtype(ml_dtypes.float8_e5m2),
    Float8E5M2FNUZType: np.dtype(ml_dtypes.float8_e5m2fnuz),
    Float8E8M0FNUType: np.dtype(ml_dtypes.float8_e8m0fnu),
    Float4E2M1FNType: np.dtype(ml_dtypes.float4_e2m1fn),
}
NARROW_INTS: dict[tuple[int, bool], np.dtype] = {  # (width, unsigned)
    (4, False): np.dtype(ml_dtypes.int4),
    (4, True): np.dtype(ml_dtypes.uint4),
    (2, False): np.dtype(ml_dtypes.int2),
    (2, True): np.dtype(ml_dtypes.uint2),
}


def numpy_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype holding values of an IR type: a tensor's or memref's element
    type for those, `index` as int64, i1 as numpy's one-byte bool, `ui8` unsigned,
    bf16, the float8/float4 types and i4/ui4/i2/ui2 as ml_dtypes' types."""
    if isinstance(t, (TensorType, MemRefType)):
        t = t.get_element_type()
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType):
        width = t.width.data
        unsigned = t.signedness.data == Signedness.UNSIGNED
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            return np.dtype(f"{'uint' if unsigned else 'int'}{width}")
        if (width, unsigned) in NARROW_INTS:
            return NARROW_INTS[(width, unsigned)]
    floats = ((Float16Type, np.float16), (Float32Type, np.float32), (Float64Type, np.float64))
    for ftype, dtype in floats:
        if isinstance(t, ftype):
            return np.dtype(dtype)
    if type(t) in NARROW_FLOATS:
        return NARROW_FLOATS[type(t)]
    raise ValueError(f"no numpy dtype for {t}")
