"""`memref.load` / `memref.store` to LLVM: GEP-based addressing, scalar and vector.

Buffers are flat, row-major and statically shaped, so an access `A[i, j]` is the
element at `i * stride0 + j` from the buffer's base pointer, addressed with one
`getelementptr inbounds T, ptr %A, i64 %offset` (never ptrtoint/inttoptr, which
LLVM's alias analysis and vectorizers cannot see through). Offsets use `nsw`
arithmetic because in-bounds offsets cannot overflow; that lets SCEV reason about
them.

In a vectorized loop (see `vectorize.py`) the offset is split into a uniform
scalar part and a per-lane part:

| per-lane part            | load                        | store                     |
|--------------------------|-----------------------------|---------------------------|
| none                     | scalar load (stays uniform) | scalar store              |
| `lane` (stride 1)        | one `<W x T>` load          | one `<W x T>` store       |
| anything else            | `llvmx.masked_gather`       | `llvmx.masked_scatter`    |

Under a mask, contiguous access becomes `llvmx.masked_load`/`masked_store`, and
a uniform address is read or written through a gather/scatter with the same
address in every lane (a scatter writes lanes in order, so the last active lane
wins, as it would in the serial loop).

`i1` buffers hold one byte per element (numpy's bool), so they are read and
written as `i8` and converted; a `<W x i1>` in memory would be bit-packed.
"""

from __future__ import annotations

from collections.abc import Sequence

from tilecraft.backends.llvm import llvmx
from tilecraft.backends.llvm.builder import FunctionBuilder, i1_vector
from tilecraft.backends.llvm.vectorize import Affine, Lanes, Lowered, Vec, materialize
from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import IntegerType, MemRefType, VectorType, i8, i64
from xdsl.ir import Attribute, SSAValue


def row_major_strides(shape: Sequence[int]) -> list[int]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return strides


def memory_type(element: Attribute) -> Attribute:
    """How an element of this type is stored (i1 as one byte)."""
    if isinstance(element, IntegerType) and element.width.data == 1:
        return i8
    return element


def element_bytes(element: Attribute) -> int:
    return max(1, (getattr(memory_type(element), "bitwidth", 8) + 7) // 8)


class Access:
    """Where a load or store goes: a base pointer plus an offset in elements.

    `offset` is the uniform part (i64); `lane_stride` is the stride between lanes
    when the per-lane part is affine; `lane_offsets` is a `<W x i64>` vector when it
    is not (then `lane_stride` is folded into it).
    """

    def __init__(
        self,
        b: FunctionBuilder,
        ref: SSAValue,
        indices: Sequence[Lowered],
        mtype: MemRefType,
        lanes: Lanes | None,
    ):
        self.b = b
        self.ref = ref
        self.element = mtype.element_type
        self.stored = memory_type(self.element)
        self.align = element_bytes(self.element)
        terms: list[tuple[SSAValue, int]] = []
        vectors: list[tuple[SSAValue, int]] = []
        self.lane_stride = 0
        for index, stride in zip(indices, row_major_strides(mtype.get_shape())):
            if isinstance(index, Affine):
                terms.append((index.base, stride))
                self.lane_stride += index.stride * stride
            elif isinstance(index, Vec):
                vectors.append((index.value, stride))
            else:
                terms.append((index, stride))
        self.offset = b.linear(terms, 0)
        self.lane_offsets: SSAValue | None = None
        if vectors:
            assert lanes is not None
            width = lanes.width
            total = materialize(b, Affine(self.offset, self.lane_stride), width)
            for vector, stride in vectors:
                total = b.iadd(total, b.imul(vector, b.const(stride, VectorType(i64, [width]))))
            self.lane_offsets = total

    @property
    def contiguous(self) -> bool:
        return self.lane_offsets is None and self.lane_stride == 1

    @property
    def uniform(self) -> bool:
        return self.lane_offsets is None and self.lane_stride == 0

    def pointer(self) -> SSAValue:
        return self.b.gep(self.ref, self.offset, self.stored)

    def offsets(self, width: int) -> SSAValue:
        """Per-lane element offsets from the base pointer, for gather/scatter."""
        if self.lane_offsets is not None:
            return self.lane_offsets
        return materialize(self.b, Affine(self.offset, self.lane_stride), width)


def lower_load(
    b: FunctionBuilder,
    op: memref.LoadOp,
    ref: SSAValue,
    indices: Sequence[Lowered],
    lanes: Lanes | None,
) -> Lowered:
    mtype = op.memref.type
    assert isinstance(mtype, MemRefType)
    access = Access(b, ref, indices, mtype, lanes)
    if lanes is None or (access.uniform and lanes.mask is None):
        value = b.add(llvm.LoadOp(access.pointer(), access.stored, access.align))
        return _from_memory(b, value, access.element)
    width = lanes.width
    vector_type = VectorType(access.stored, [width])
    if access.contiguous and lanes.mask is None:
        value = b.add(llvm.LoadOp(access.pointer(), vector_type, access.align))
    elif access.contiguous:
        zero = b.const(0, vector_type)
        value = b.add(llvmx.MaskedLoadOp(access.pointer(), lanes.mask, zero, access.align))
    else:
        mask = lanes.mask or b.const(1, i1_vector(width))
        zero = b.const(0, vector_type)
        value = b.add(
            llvmx.MaskedGatherOp(
                ref, access.offsets(width), mask, zero, access.stored, access.align
            )
        )
    return Vec(_from_memory(b, value, access.element))


def lower_store(
    b: FunctionBuilder,
    op: memref.StoreOp,
    value: Lowered,
    ref: SSAValue,
    indices: Sequence[Lowered],
    lanes: Lanes | None,
) -> None:
    mtype = op.memref.type
    assert isinstance(mtype, MemRefType)
    access = Access(b, ref, indices, mtype, lanes)
    if lanes is None or (access.uniform and lanes.mask is None and isinstance(value, SSAValue)):
        assert isinstance(value, SSAValue)
        stored = _to_memory(b, value, access.element)
        b.add(llvm.StoreOp(stored, access.pointer(), access.align))
        return
    width = lanes.width
    vector = _to_memory(b, materialize(b, value, width), access.element)
    if access.contiguous and lanes.mask is None:
        b.add(llvm.StoreOp(vector, access.pointer(), access.align))
    elif access.contiguous:
        b.add(llvmx.MaskedStoreOp(vector, access.pointer(), lanes.mask, access.align))
    else:
        mask = lanes.mask or b.const(1, i1_vector(width))
        b.add(
            llvmx.MaskedScatterOp(
                vector, ref, access.offsets(width), mask, access.stored, access.align
            )
        )


def _from_memory(b: FunctionBuilder, value: SSAValue, element: Attribute) -> SSAValue:
    if memory_type(element) == element:
        return value
    result_type = (
        i1_vector(value.type.get_shape()[0]) if isinstance(value.type, VectorType) else element
    )
    return b.add(llvm.TruncOp(value, result_type))


def _to_memory(b: FunctionBuilder, value: SSAValue, element: Attribute) -> SSAValue:
    if memory_type(element) == element:
        return value
    result_type = (
        VectorType(i8, value.type.get_shape()) if isinstance(value.type, VectorType) else i8
    )
    return b.add(llvm.ZExtOp(value, result_type))
