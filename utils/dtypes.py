"""numpy dtypes of IR types, shared by the evaluators, the folders and the runtime."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
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


def numpy_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype holding values of an IR type: a tensor's or memref's element
    type for those, `index` as int64, i1 as numpy's one-byte bool, `ui8` unsigned."""
    if isinstance(t, (TensorType, MemRefType)):
        t = t.get_element_type()
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            unsigned = t.signedness.data == Signedness.UNSIGNED
            return np.dtype(f"{'uint' if unsigned else 'int'}{width}")
    floats = ((Float16Type, np.float16), (Float32Type, np.float32), (Float64Type, np.float64))
    for ftype, dtype in floats:
        if isinstance(t, ftype):
            return np.dtype(dtype)
    raise ValueError(f"no numpy dtype for {t}")
