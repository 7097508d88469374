"""Memory access to LLVM: GEP-based addressing, scalar and vector.

Buffers are flat and row-major, so an access `A[i, j]` is the element at
`i * stride0 + j` from the buffer's base pointer (a stride is a constant, or an
i64 product of sizes where a trailing size is `?`), addressed with one
`getelementptr inbounds T, ptr %A, i64 %offset` (never ptrtoint/inttoptr, which
LLVM's alias analysis and vectorizers cannot see through). Offsets use `nsw`
arithmetic because in-bounds offsets cannot overflow; that lets SCEV reason about
them.

The vector forms (what `loop-vectorize` writes):

| loop IR                 | LLVM                                        |
|-------------------------|---------------------------------------------|
| `vector.load`/`store`   | one `<W x T>` load/store at the first lane  |
| `vector.maskedload`/... | `llvmx.masked_load`/`masked_store`          |
| `loop.gather`/`scatter` | `llvmx.masked_gather`/`masked_scatter`      |

`i1` buffers hold one byte per element (numpy's bool), so they are read and
written as `i8` and converted; a `<W x i1>` in memory would be bit-packed. So do
the 4- and 2-bit types (ml_dtypes' int4, uint2, float4_e2m1fn...: the value in the
low bits of its byte, the others zero). A float type LLVM lacks (bf16, float8)
is held as the integer of its width (`builder.scalar_type`).
"""

from __future__ import annotations

from collections.abc import Sequence

from tilecraft.dialects import llvmx
from tilecraft.backends.llvm.builder import FunctionBuilder, load_op, scalar_type, store_op
from tilecraft.utils.attrs import vector_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerType, MemRefType, VectorType, i8
from xdsl.ir import Attribute, SSAValue


def row_major_strides(shape: Sequence[int]) -> list[int]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return strides


def memory_type(element: Attribute) -> Attribute:
    """How an element of this type is stored (i1, i2, i4 as one byte)."""
    value = scalar_type(element)
    if isinstance(value, IntegerType) and value.width.data < 8:
        return i8
    return value


def element_bytes(element: Attribute) -> int:
    return max(1, (getattr(memory_type(element), "bitwidth", 8) + 7) // 8)


Strides = Sequence[int | SSAValue]


def address(
    b: FunctionBuilder,
    ref: SSAValue,
    mtype: MemRefType,
    indices: Sequence[SSAValue],
    strides: Strides | None = None,
) -> SSAValue:
    """The pointer to element `indices` (i64 values) of buffer `ref`; `strides`
    (i64 values where a size is `?`) default to the static shape's."""
    strides = row_major_strides(mtype.get_shape()) if strides is None else strides
    offset = b.linear(list(zip(indices, strides)), 0)
    return b.gep(ref, offset, memory_type(mtype.element_type))


def load(
    b: FunctionBuilder,
    ref: SSAValue,
    mtype: MemRefType,
    indices: Sequence[SSAValue],
    width: int | None = None,
    mask: SSAValue | None = None,
    strides: Strides | None = None,
    alignment: int = 0,
) -> SSAValue:
    """A scalar, or `width` consecutive elements (where `mask` holds, 0 elsewhere);
    `alignment`: the address's, in bytes, where known better than the element's."""
    element = mtype.element_type
    stored = memory_type(element)
    align = max(element_bytes(element), alignment)
    pointer = address(b, ref, mtype, indices, strides)
    if width is None:
        value = b.add(load_op(pointer, stored, align))
    elif mask is None:
        value = b.add(load_op(pointer, vector_type(stored, width), align))
    else:
        zero = b.const(0, vector_type(stored, width))
        value = b.add(llvmx.MaskedLoadOp(pointer, mask, zero, align))
    return _from_memory(b, value, element)


def store(
    b: FunctionBuilder,
    value: SSAValue,
    ref: SSAValue,
    mtype: MemRefType,
    indices: Sequence[SSAValue],
    mask: SSAValue | None = None,
    strides: Strides | None = None,
    alignment: int = 0,
) -> None:
    """Store a scalar, or a vector at consecutive elements (where `mask` holds)."""
    element = mtype.element_type
    align = max(element_bytes(element), alignment)
    pointer = address(b, ref, mtype, indices, strides)
    stored = _to_memory(b, value, element)
    if mask is None:
        b.add(store_op(stored, pointer, align))
    else:
        b.add(llvmx.MaskedStoreOp(stored, pointer, mask, align))


def gather(
    b: FunctionBuilder, ref: SSAValue, mtype: MemRefType, offsets: SSAValue, mask: SSAValue
) -> SSAValue:
    """Lane `l` reads element `offsets[l]` of the buffer where `mask` holds (0 elsewhere)."""
    element = mtype.element_type
    stored = memory_type(element)
    width = offsets.type.get_shape()[0]  # type: ignore[attr-defined]
    zero = b.const(0, vector_type(stored, width))
    value = b.add(
        llvmx.MaskedGatherOp(ref, offsets, mask, zero, stored, element_bytes(element))
    )
    return _from_memory(b, value, element)


def scatter(
    b: FunctionBuilder,
    value: SSAValue,
    ref: SSAValue,
    mtype: MemRefType,
    offsets: SSAValue,
    mask: SSAValue,
) -> None:
    """Lane `l` of `value` goes to element `offsets[l]` where `mask` holds, in lane order."""
    element = mtype.element_type
    stored = _to_memory(b, value, element)
    b.add(
        llvmx.MaskedScatterOp(
            stored, ref, offsets, mask, memory_type(element), element_bytes(element)
        )
    )


def _from_memory(b: FunctionBuilder, value: SSAValue, element: Attribute) -> SSAValue:
    held = scalar_type(element)
    if memory_type(element) == held:
        return value
    result_type = (
        VectorType(held, value.type.get_shape()) if isinstance(value.type, VectorType) else held
    )
    return b.add(llvm.TruncOp(value, result_type))


def _to_memory(b: FunctionBuilder, value: SSAValue, element: Attribute) -> SSAValue:
    if memory_type(element) == scalar_type(element):
        return value
    result_type = (
        VectorType(i8, value.type.get_shape()) if isinstance(value.type, VectorType) else i8
    )
    return b.add(llvm.ZExtOp(value, result_type))
