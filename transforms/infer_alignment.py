"""`infer-alignment`: the alignment of each load and store's address, proved
from its indices and written on the op, so LLVM emits wide accesses.

A GPU thread loads 16 bytes at once (`ld.global.v4.f32`, `ld.shared.v4.f32`)
only from a 16-byte-aligned address, and LLVM's NVPTX backend splits a
`<4 x float>` load that it cannot prove aligned into four scalar ones. The
loop IR knows more than LLVM sees: a buffer's base alignment (a function
argument's is the `argument-alignment` the runtime guarantees; a `loop.alloc`'s
is 16, as the shared globals, stack slots and heap blocks are aligned) and its
row-major strides. The address of `A[i, j]` is `base + (i * stride0 + j) *
bytes`, so its alignment is the base's, or less where the offset is not a
multiple of it; the offset's power-of-two divisor comes from how its indices
are computed:

| index                          | divides it              |
|--------------------------------|-------------------------|
| constant `c`                   | the largest 2^k of `c`  |
| `a + b`, `a - b`, `a rem b`    | the smaller of a's, b's |
| `a * b`, `a << c`              | their product           |
| a loop variable (step 1)       | 1 (unless one iteration)|
| anything else (`gpu.thread_id`)| 1                       |

Each `memref.load`/`store` and `vector.load`/`store` whose proved alignment is
more than its element's gets `alignment = N : i64` (bytes), which
`convert-loop-to-llvm` and `convert-gpu-to-nvvm` put on the `llvm.load`/`store`.

```mlir
%o = arith.muli %tx, %c4 : index
%v = vector.load %B[%r, %o] : memref<8x128xf32>, vector<4xf32>
```
becomes (128-float rows, 4-float offset: 16 bytes)
```mlir
%v = vector.load %B[%r, %o] {alignment = 16 : i64} : memref<8x128xf32>, vector<4xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref, vector
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tilecraft.backends.llvm.memory import element_bytes, row_major_strides
from tilecraft.dialects.loop import AllocOp, ForOp

ALLOC_ALIGNMENT = 16  # shared globals (.align 16), stack slots and heap blocks (64)
_CAP = 1 << 12  # (a divisor past every alignment that matters; zero divides by all)
_ACCESSES = (memref.LoadOp, memref.StoreOp, vector.LoadOp, vector.StoreOp)


def _power_of_two(n: int) -> int:
    return min(_CAP, n & -n) if n else _CAP


def index_divisor(value: SSAValue) -> int:
    """A power of two that divides every value `value` takes (at most 4096)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return _power_of_two(abs(owner.value.value.data))
    if isinstance(owner, arith.AddiOp | arith.SubiOp | arith.RemSIOp | arith.RemUIOp):
        return min(index_divisor(owner.lhs), index_divisor(owner.rhs))
    if isinstance(owner, arith.MuliOp):
        return min(_CAP, index_divisor(owner.lhs) * index_divisor(owner.rhs))
    if isinstance(owner, arith.ShLIOp) and isinstance(owner.rhs.owner, arith.ConstantOp):
        shift = owner.rhs.owner.value
        if isinstance(shift, IntegerAttr) and 0 <= shift.value.data < 13:
            return min(_CAP, index_divisor(owner.lhs) << shift.value.data)
    if isinstance(owner, arith.IndexCastOp):
        return index_divisor(owner.input)
    if isinstance(owner, arith.SelectOp):
        return min(index_divisor(owner.lhs), index_divisor(owner.rhs))
    if isinstance(owner, Block) and isinstance(loop := owner.parent_op(), ForOp) and value is loop.var:
        return _power_of_two(loop.lb.data) if loop.is_static and loop.extent == 1 else 1
    return 1


def base_alignment(buffer: SSAValue, argument_alignment: int) -> int:
    """The alignment (bytes) of a buffer's first element, or 0 if unknown."""
    owner = buffer.owner
    if isinstance(owner, AllocOp):
        return ALLOC_ALIGNMENT
    if isinstance(owner, Block) and isinstance(owner.parent_op(), func.FuncOp | gpu.FuncOp):
        return argument_alignment
    return 0  # a view, or a buffer from elsewhere


def access_alignment(op: Operation, argument_alignment: int) -> int:
    """The alignment (bytes) of the address that a load or store accesses."""
    if isinstance(op, memref.LoadOp | memref.StoreOp):
        buffer, indices = op.memref, list(op.indices)
    else:
        assert isinstance(op, vector.LoadOp | vector.StoreOp)
        buffer, indices = op.base, list(op.indices)
    mtype = buffer.type
    if not isinstance(mtype, MemRefType) or any(n < 0 for n in mtype.get_shape()):
        return 0
    base = base_alignment(buffer, argument_alignment)
    if base == 0:
        return 0
    size = element_bytes(mtype.element_type)
    if size & (size - 1):
        return 0  # (an element of 3, 6 ... bytes: not a power of two)
    divisor = 0
    for index, stride in zip(indices, row_major_strides(mtype.get_shape())):
        divisor = gcd(divisor, index_divisor(index) * _power_of_two(stride))
    return min(base, size * _power_of_two(divisor) if divisor else base)


@dataclass(frozen=True)
class InferAlignmentPass(ModulePass):
    """Write on each load and store the alignment its indices prove."""

    name = "infer-alignment"

    argument_alignment: int = 16
    """The alignment (bytes) of the functions' buffer arguments: 16 for the
    CUDA runtime, which checks it of every array it passes (cuMemAlloc gives 256)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.argument_alignment < 1 or self.argument_alignment & (self.argument_alignment - 1):
            raise PassFailedException(
                f"{self.name}: argument-alignment must be a power of two, not {self.argument_alignment}"
            )
        for access in op.walk():
            if isinstance(access, _ACCESSES):
                alignment = access_alignment(access, self.argument_alignment)
                if alignment > element_bytes(_element(access)):
                    access.attributes["alignment"] = IntegerAttr(alignment, i64)


def _element(op: Operation):
    buffer = op.memref if isinstance(op, memref.LoadOp | memref.StoreOp) else op.base  # type: ignore[attr-defined]
    return buffer.type.element_type


__all__ = ["InferAlignmentPass", "access_alignment", "index_divisor"]
