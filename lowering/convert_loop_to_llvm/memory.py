"""`convert-loop-to-llvm` patterns for buffers and memory access: `loop.alloc`,
`loop.view`, `memref.load`/`store`, the `vector` loads, stores and broadcasts
and `loop.gather`/`scatter` that `loop-vectorize` writes (addressing in
`backends/llvm/memory.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from tilecraft.backends.llvm import memory
from tilecraft.backends.llvm.builder import PTR
from tilecraft.backends.llvm.memory import element_bytes, memory_type
from tilecraft.dialects.loop import AllocOp, GatherOp, ScatterOp, ViewOp
from tilecraft.lowering.convert_loop_to_llvm.state import Conversion, dims_of, pointer_of, replace_with
from tilecraft.utils.aligned import ALIGNMENT
from xdsl.dialects import llvm, memref, vector
from xdsl.dialects.builtin import IntegerAttr, MemRefType, VectorType, i8, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint


# "local" buffers larger than this go to the heap: worker threads have small stacks.
MAX_STACK_BYTES = 256 * 1024
BUFFER_ALIGNMENT = ALIGNMENT  # as the arrays the runtime binds (utils/aligned.py)
# Small buffers get a stack slot per copy (SROA keeps them apart in registers);
# larger copies of one buffer (an unrolled body's) share one slot.
SHARED_SLOT_BYTES = 4096


def known_alignment(op: Operation) -> int:
    """The `alignment` (bytes) that `infer-alignment` proved for an access, or 0."""
    attr = op.attributes.get("alignment")
    return attr.value.data if isinstance(attr, IntegerAttr) else 0


def _memref_type(value: SSAValue) -> MemRefType:
    mtype = value.type
    assert isinstance(mtype, MemRefType)
    return mtype


@dataclass
class LoadLowering(RewritePattern):
    """`memref.load %A[%i, %j]` → `llvm.getelementptr` + `llvm.load`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.memref), _memref_type(op.memref)
        strides = self.state.strides(op.memref, b)
        value = memory.load(b, ref, mtype, list(op.indices), strides=strides, alignment=known_alignment(op))
        replace_with(rewriter, op, [value])


@dataclass
class StoreLowering(RewritePattern):
    """`memref.store %v, %A[%i, %j]` → `llvm.getelementptr` + `llvm.store`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.memref), _memref_type(op.memref)
        strides = self.state.strides(op.memref, b)
        memory.store(b, op.value, ref, mtype, list(op.indices), strides=strides, alignment=known_alignment(op))
        rewriter.erase(op)


def _width(t: Attribute) -> int:
    assert isinstance(t, VectorType)
    return t.get_shape()[0]


@dataclass
class VectorLoadLowering(RewritePattern):
    """`vector.load %A[%i, %j]` → one `<W x T>` load from the address of `A[i, j]`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.LoadOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        strides = self.state.strides(op.base, b)
        width = _width(op.result.type)
        value = memory.load(b, ref, mtype, list(op.indices), width, strides=strides, alignment=known_alignment(op))
        replace_with(rewriter, op, [value])


@dataclass
class VectorStoreLowering(RewritePattern):
    """`vector.store %v, %A[%i, %j]` → one `<W x T>` store."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.StoreOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        strides = self.state.strides(op.base, b)
        memory.store(b, op.vector, ref, mtype, list(op.indices), strides=strides, alignment=known_alignment(op))
        rewriter.erase(op)


@dataclass
class MaskedLoadLowering(RewritePattern):
    """`vector.maskedload` → `llvmx.masked_load` (masked-off lanes are 0: the
    pass-through `loop-vectorize` writes)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.MaskedLoadOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        width = _width(op.result.type)
        value = memory.load(
            b, ref, mtype, list(op.indices), width, op.mask, self.state.strides(op.base, b)
        )
        if b.known.get(op.pass_thru) != 0:
            value = b.select(op.mask, value, op.pass_thru)
        replace_with(rewriter, op, [value])


@dataclass
class MaskedStoreLowering(RewritePattern):
    """`vector.maskedstore` → `llvmx.masked_store`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.MaskedStoreOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        memory.store(
            b, op.value_to_store, ref, mtype, list(op.indices), op.mask, self.state.strides(op.base, b)
        )
        rewriter.erase(op)


@dataclass
class GatherLowering(RewritePattern):
    """`loop.gather` → `llvmx.masked_gather` from the buffer's base pointer."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GatherOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        replace_with(rewriter, op, [memory.gather(b, ref, mtype, op.offsets, op.mask)])


@dataclass
class ScatterLowering(RewritePattern):
    """`loop.scatter` → `llvmx.masked_scatter`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScatterOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        ref, mtype = pointer_of(op.base), _memref_type(op.base)
        memory.scatter(b, op.value, ref, mtype, op.offsets, op.mask)
        rewriter.erase(op)


@dataclass
class BroadcastLowering(RewritePattern):
    """`vector.broadcast %x` → `%x` in every lane (insertelement + shufflevector)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: vector.BroadcastOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        replace_with(rewriter, op, [b.splat(op.source, _width(op.vector.type))])


@dataclass
class DimLowering(RewritePattern):
    """`memref.dim %A, %c1` → the size: a constant, or the i64 that the memref
    carries for a `?` dimension (an argument of the function)."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DimOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        index = b.known.get(op.index)
        assert isinstance(index, int), "checked: memref.dim of a constant dimension"
        size = dims_of(op.source)[index]
        replace_with(rewriter, op, [b.index(size) if isinstance(size, int) else size])


# Buffers ----------------------------------------------------------------------


@dataclass
class AllocLowering(RewritePattern):
    """`loop.alloc` → a prologue `llvm.alloca` (small, not global) or
    `aligned_alloc` here and `free` at the end of the block."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AllocOp, rewriter: PatternRewriter) -> None:
        mtype = op.buffer.type
        assert isinstance(mtype, MemRefType)
        stored = memory_type(mtype.element_type)
        b = self.state.builder(op)
        if op.sizes:
            self._dynamic(op, mtype, b, rewriter)
            return
        count = prod(mtype.get_shape())
        size = count * element_bytes(mtype.element_type)
        if op.scope.data.value != "global" and size <= MAX_STACK_BYTES:
            # Large copies of one buffer (an unrolled body allocates one per
            # iteration) share a stack slot: each copy is used by its iteration only.
            if size <= SHARED_SLOT_BYTES:
                pointer = b.alloca(stored, count, BUFFER_ALIGNMENT)
            else:
                key = (b.func, op.buffer_name.data, mtype)
                if key not in self.state.stack_slots:
                    self.state.stack_slots[key] = b.alloca(stored, count, BUFFER_ALIGNMENT)
                pointer = self.state.stack_slots[key]
            replace_with(rewriter, op, [self.state.as_memref(pointer, mtype)])
            return
        self.state.declare("aligned_alloc", [i64, i64], PTR)
        self.state.declare("free", [PTR], None)
        rounded = -(-size // BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT  # aligned_alloc wants a multiple
        pointer = b.call("aligned_alloc", [b.index(BUFFER_ALIGNMENT), b.index(rounded)], PTR)
        assert pointer is not None
        block = op.parent_block()
        assert block is not None and block.last_op is not None
        # Freed before the block's terminator: it moves with the terminator
        # when a later op of the block is split off into new blocks.
        rewriter.insert(llvm.CallOp("free", pointer), InsertPoint.before(block.last_op))
        replace_with(rewriter, op, [self.state.as_memref(pointer, mtype)])

    def _dynamic(self, op: AllocOp, mtype: MemRefType, b, rewriter: PatternRewriter) -> None:
        """A buffer with `?` sizes: on the heap, its bytes computed from them."""
        static = prod(d for d in mtype.get_shape() if d >= 0) * element_bytes(mtype.element_type)
        size = b.index(static)
        for n in op.sizes:
            size = b.imul(size, n, nsw=True)
        # aligned_alloc wants a multiple of the alignment
        padded = b.iadd(size, b.index(BUFFER_ALIGNMENT - 1), nsw=True)
        rounded = b.imul(b.add(llvm.UDivOp(padded, b.index(BUFFER_ALIGNMENT))), b.index(BUFFER_ALIGNMENT), nsw=True)
        self.state.declare("aligned_alloc", [i64, i64], PTR)
        self.state.declare("free", [PTR], None)
        pointer = b.call("aligned_alloc", [b.index(BUFFER_ALIGNMENT), rounded], PTR)
        assert pointer is not None
        block = op.parent_block()
        assert block is not None and block.last_op is not None
        rewriter.insert(llvm.CallOp("free", pointer), InsertPoint.before(block.last_op))
        cast = self.state.as_memref(pointer, mtype, sizes=list(op.sizes))
        replace_with(rewriter, op, [cast])


@dataclass
class ViewLowering(RewritePattern):
    """`loop.view %arena[256]` → `llvm.getelementptr inbounds i8, %arena[256]`."""

    state: Conversion

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ViewOp, rewriter: PatternRewriter) -> None:
        b = self.state.builder(op)
        pointer = b.gep(pointer_of(op.source), b.index(op.offset.data), i8)
        replace_with(rewriter, op, [self.state.as_memref(pointer, op.result.type)])
