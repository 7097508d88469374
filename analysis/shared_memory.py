"""Shared memory in a GPU kernel: which buffers are "shared", which ops write or
read them, and which values differ between the threads of a block.

`convert-loop-to-gpu` checks shared buffers with these when it outlines a
kernel (size, writes spread over the threads) and `insert-gpu-barriers` places
barriers with them. A buffer is shared when a `loop.alloc` in "shared" scope
makes it. An op reads a buffer it loads from (`memref.load`, `vector.load`,
`vector.maskedload`, `loop.gather`) and writes one it stores to
(`memref.store`, `vector.store`, `vector.maskedstore`, `loop.scatter`); any
other op that takes the buffer (a `loop.tensor_intrin`, a view) counts as both.
An op with regions accesses what the ops inside it access.

A value is uniform in a block when every thread of it sees the same: constants,
the kernel's arguments, block indices, and what is computed from uniform values
by pure ops (the variable of a loop whose extent is uniform, too). Thread
indices and loaded values are not.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import prod

from xdsl.dialects import gpu, memref, vector
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.traits import is_side_effect_free

from tilecraft.dialects.loop import AllocOp, ForOp, GatherOp, MemoryScope, ScatterOp

_READS = {memref.LoadOp: "memref", vector.LoadOp: "base", vector.MaskedLoadOp: "base", GatherOp: "base"}
_WRITES = {memref.StoreOp: "memref", vector.StoreOp: "base", vector.MaskedStoreOp: "base", ScatterOp: "base"}


def is_shared(value: SSAValue) -> bool:
    """Whether `value` is a buffer that a `loop.alloc ... shared` makes."""
    owner = value.owner
    return isinstance(owner, AllocOp) and owner.scope.data == MemoryScope.SHARED


def shared_allocs(op: Operation) -> list[AllocOp]:
    """The "shared" `loop.alloc`s inside `op`, in order."""
    return [o for o in op.walk() if isinstance(o, AllocOp) and o.scope.data == MemoryScope.SHARED]


def shared_bytes(alloc: AllocOp) -> int:
    mtype = alloc.buffer.type
    assert isinstance(mtype, MemRefType)
    bits = getattr(mtype.element_type, "bitwidth", 32)
    return prod(mtype.get_shape()) * max(1, bits // 8)


def accesses(op: Operation) -> tuple[set[SSAValue], set[SSAValue]]:
    """The shared buffers `op` (with what is inside it) writes, and those it reads."""
    writes: set[SSAValue] = set()
    reads: set[SSAValue] = set()
    for inner in op.walk():
        for operand in inner.operands:
            if not is_shared(operand):
                continue
            if type(inner) in _READS and getattr(inner, _READS[type(inner)]) is operand:
                reads.add(operand)
            elif type(inner) in _WRITES and getattr(inner, _WRITES[type(inner)]) is operand:
                writes.add(operand)
            else:
                writes.add(operand)
                reads.add(operand)
    return writes, reads


def writing_ops(buffer: SSAValue) -> Iterable[Operation]:
    """The ops that write `buffer` (or may: those taking it other than to load)."""
    for use in buffer.uses:
        op = use.operation
        if not (type(op) in _READS and getattr(op, _READS[type(op)]) is buffer):
            yield op


class Uniformity:
    """Answers whether a value is the same in every thread of a block (memoized)."""

    def __init__(self) -> None:
        self._known: dict[SSAValue, bool] = {}

    def uniform(self, value: SSAValue) -> bool:
        if value not in self._known:
            self._known[value] = True  # (a cycle through a loop variable: decided below)
            self._known[value] = self._decide(value)
        return self._known[value]

    def _decide(self, value: SSAValue) -> bool:
        owner = value.owner
        if isinstance(owner, Block):
            parent = owner.parent_op()
            if isinstance(parent, ForOp) and isinstance(value, BlockArgument):
                return all(self.uniform(v) for v in parent.operands)
            return isinstance(parent, gpu.FuncOp)  # (the kernel's arguments)
        if isinstance(owner, gpu.ThreadIdOp | gpu.LaneIdOp):
            return False
        if isinstance(owner, gpu.BlockIdOp | gpu.GridDimOp | gpu.BlockDimOp):
            return True
        if owner.regions or not is_side_effect_free(owner):
            return False  # (a load: what it reads may differ between threads)
        return all(self.uniform(v) for v in owner.operands)


__all__ = ["Uniformity", "accesses", "is_shared", "shared_allocs", "shared_bytes", "writing_ops"]
