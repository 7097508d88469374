"""`expand-dma`: each `loop.dma` becomes the element loops it stands for, so a
program whose copies `inject-dma` turned into DMAs still runs on the CPU (and can
be checked against numpy before and after). It is the first pass of `loop-to-llvm`.

The loops follow `loop.dma`'s definition (dialects/loop.py): rows x cols x elem
scalars; both buffers are addressed as flat arrays (the flat offset is turned
back into indices with `arith.divsi`/`remsi`). A load writes every scalar of the
tile, 0 in the padding; a store writes the `size` rows and columns, narrowing
with `arith.trunci` where the global buffer's integers are narrower.

```mlir
loop.dma %A[%i, %c0] -> %B[%c0, %c0] size(%y, %x) pad(%c0, %c0, %c1, %c1)
    stride 4 tile 2 x 3 elem 16 : memref<8x64xi8> -> memref<2x48xi8>
```
becomes
```mlir
loop.for %r = 0 to 2 { loop.for %c = 0 to 3 { loop.for %e = 0 to 16 {
  %in = (%r, %c) inside the padding's frame
  %v = scf.if %in -> (i8) { memref.load %A[...] } else { 0 }
  memref.store %v, %B[...]
}}}
```
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from tilecraft.dialects.loop import DmaOp, ForOp, GuardOp
from tilecraft.transforms.inject_dma.emit import Builder
from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint


def _const(cur: Builder, v: int) -> SSAValue:
    return cur.value(arith.ConstantOp(IntegerAttr(v, IndexType())))


def _flat(cur: Builder, ref: SSAValue, indices) -> SSAValue:
    """The row-major flat offset of `ref[indices]`."""
    shape = ref.type.get_shape()
    total: SSAValue | None = None
    for n, idx in enumerate(indices):
        stride = prod(shape[n + 1 :])
        term = idx if stride == 1 else cur.value(arith.MuliOp(idx, _const(cur, stride)))
        total = term if total is None else cur.value(arith.AddiOp(total, term))
    return total if total is not None else _const(cur, 0)


def _unflat(cur: Builder, ref: SSAValue, offset: SSAValue) -> list[SSAValue]:
    shape = ref.type.get_shape()
    out = []
    for n, d in enumerate(shape):
        stride = prod(shape[n + 1 :])
        q = offset if stride == 1 else cur.value(arith.DivSIOp(offset, _const(cur, stride)))
        out.append(q if n == 0 else cur.value(arith.RemSIOp(q, _const(cur, d))))
    return out


def _offset(cur: Builder, base: SSAValue, row: SSAValue, pitch: SSAValue, col: SSAValue, elem: int, e: SSAValue):
    """base + (row * pitch + col) * elem + e."""
    line = cur.value(arith.AddiOp(cur.value(arith.MuliOp(row, pitch)), col))
    scaled = cur.value(arith.MuliOp(line, _const(cur, elem)))
    return cur.value(arith.AddiOp(cur.value(arith.AddiOp(base, scaled)), e))


def _within(cur: Builder, v: SSAValue, lo: SSAValue, size: SSAValue) -> SSAValue:
    end = cur.value(arith.AddiOp(lo, size))
    a = cur.value(arith.CmpiOp(v, lo, "sge"))
    b = cur.value(arith.CmpiOp(v, end, "slt"))
    return cur.value(arith.AndIOp(a, b))


class _Before(Builder):
    """Inserts before the `loop.dma` being expanded, through the rewriter."""

    def __init__(self, anchor: DmaOp, rewriter: PatternRewriter):
        super().__init__(anchor.parent_block())
        self.anchor, self.rewriter = anchor, rewriter

    def insert(self, op):
        self.rewriter.insert(op, InsertPoint.before(self.anchor))
        return op


@dataclass
class ExpandDma(RewritePattern):
    """A `loop.dma` becomes its element loops (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DmaOp, rewriter: PatternRewriter) -> None:
        outer = _Before(op, rewriter)
        src_base = _flat(outer, op.src, op.src_indices)
        dst_base = _flat(outer, op.dst, op.dst_indices)
        rows = ForOp(0, op.rows.data, var_name="dma_row")
        outer.insert(rows)
        c_rows = outer.child(rows)
        cols = ForOp(0, op.cols.data, var_name="dma_col")
        c_rows.insert(cols)
        c_cols = c_rows.child(cols)
        elems = ForOp(0, op.elem.data, var_name="dma_elem")
        c_cols.insert(elems)
        cur = c_cols.child(elems)
        r, c, e = rows.var, cols.var, elems.var
        src_t, dst_t = op.src.type, op.dst.type
        assert isinstance(src_t, MemRefType) and isinstance(dst_t, MemRefType)
        if op.is_load:
            inside = cur.value(
                arith.AndIOp(_within(cur, r, op.y_pad_0, op.y_size), _within(cur, c, op.x_pad_0, op.x_size))
            )
            then = Builder(Block())
            sr = then.value(arith.SubiOp(r, op.y_pad_0))
            sc = then.value(arith.SubiOp(c, op.x_pad_0))
            src_off = _offset(then, src_base, sr, _const(then, op.x_stride.data), sc, op.elem.data, e)
            loaded = then.value(memref.LoadOp.get(op.src, _unflat(then, op.src, src_off)))
            then.insert(scf.YieldOp(loaded))
            other = Builder(Block())
            zero = other.value(arith.ConstantOp(IntegerAttr(0, dst_t.element_type)))
            other.insert(scf.YieldOp(zero))
            value = cur.value(
                scf.IfOp(inside, [dst_t.element_type], Region(then.block), Region(other.block))
            )
            dst_off = _offset(cur, dst_base, r, _const(cur, op.cols.data), c, op.elem.data, e)
            cur.insert(memref.StoreOp.get(value, op.dst, _unflat(cur, op.dst, dst_off)))
        else:
            zero = _const(cur, 0)
            inside = cur.value(
                arith.AndIOp(_within(cur, r, zero, op.y_size), _within(cur, c, zero, op.x_size))
            )
            guard = GuardOp(inside)
            cur.insert(guard)
            body = cur.child(guard)
            src_off = _offset(body, src_base, r, op.x_size, c, op.elem.data, e)
            value = body.value(memref.LoadOp.get(op.src, _unflat(body, op.src, src_off)))
            if src_t.element_type != dst_t.element_type:
                assert isinstance(dst_t.element_type, IntegerType)
                value = body.value(arith.TruncIOp(value, dst_t.element_type))
            dst_off = _offset(body, dst_base, r, _const(body, op.x_stride.data), c, op.elem.data, e)
            body.insert(memref.StoreOp.get(value, op.dst, _unflat(body, op.dst, dst_off)))
        rewriter.erase(op)


@dataclass(frozen=True)
class ExpandDmaPass(ModulePass):
    """Lower every `loop.dma` to element loops (what the CPU runs)."""

    name = "expand-dma"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not any(isinstance(inner, DmaOp) for inner in op.walk()):
            return  # the common case on the CPU: nothing to walk with patterns
        PatternRewriteWalker(GreedyRewritePatternApplier([ExpandDma()]), apply_recursively=False).rewrite_module(op)
