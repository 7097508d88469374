"""`inject-dma`: a copy nest between a global buffer and an accelerator buffer
becomes one `loop.dma` (VTA's 2-D strided LOAD/STORE with padding).

`cache_read(A, "inp_buffer", ...)`, `cache_write(C, "acc_buffer")` and a stage
kept in an accelerator scope (`set_scope`) give loop nests that copy element by
element: a load from a global buffer stored into an `inp_buffer`, `wgt_buffer` or
`acc_buffer` buffer (possibly `scf.if(in_bounds, load, 0)` or under a
`loop.guard`: the padded form), or a load from an `acc_buffer` stored into a
global buffer (possibly narrowed by `arith.trunci`). The accelerator moves whole
elements (an input BATCH x BLOCK vector, a weight BLOCK x BLOCK tile: the spec
says how many scalars) in 2-D: `y` rows of `x` contiguous elements, rows
`x_stride` apart in DRAM, packed in the on-chip buffer.

The algorithm, on the nest's loops (outer to inner; loops of one iteration drop
out) and the two accesses' flat offsets as affine sums of loop variables
(`analysis.expr`; values defined outside the nest are atoms):

1. the innermost loops must walk one element contiguously on both sides (their
   strides 1, BLOCK, ... multiply up to the element size); a loop that covers
   several elements is split;
2. the outer loops, in elements, fold pairwise where both sides are contiguous
   across them (`o.stride == i.stride * i.extent` on each side) and neither is
   clipped by the bounds condition;
3. at most two are left: x (contiguous in DRAM, stride 1 element) and y (its
   DRAM stride is `x_stride`); the buffer side must be packed row-major,
   `y` stride = x extent: a transposing copy is refused. When more are left, the
   outermost loops stay loops around the DMA of the inner ones (one DMA per
   iteration, as VTA's runtime issues them);
4. the bounds condition (`arith.andi` of `cmpi`s, from the `scf.if` or guard) is a
   conjunction of `v >= lo` / `v < hi` on the y and x variables, where `lo` and
   `hi` are index expressions of the enclosing loops: the padding is
   `y_pad_0 = clamp(lo, 0, rows)`, `y_pad_1 = rows - clamp(hi, y_pad_0, rows)`,
   the size what is left, and the DMA reads from the first in-bounds element.

A nest that is a copy but fails a step is an error at its store: an accelerator
buffer has no other way in or out (elementwise access is the CPU's), so the
schedule must change; the message says which step failed. Compute nests (a
store of anything but a plain load) are left alone.

```mlir
%pad = loop.alloc "pad" inp_buffer : memref<5x8x16xi8>
loop.for %h = 0 to 5 {
  loop.for %w = 0 to 8 {
    loop.for %c = 0 to 16 {
      %in = ... (3*%ho + %h >= 1) and (3*%ho + %h < 7) and (%w >= 1) and (%w < 7)
      %v = scf.if %in -> (i8) { memref.load %data[3*%ho + %h - 1, %w - 1, %c] } else { 0 }
      memref.store %v, %pad[%h, %w, %c]
}}}
```
becomes (`%yp0 = clamp(1 - 3*%ho, 0, 5)`, ... computed before it)
```mlir
loop.dma %data[%row, %c0, %c0] -> %pad[%c0, %c0, %c0] size(%ys, %c6)
    pad(%yp0, %yp1, %c1, %c1) stride 6 tile 5 x 8 elem 16 : memref<6x6x16xi8> -> memref<5x8x16xi8>
```

The package: `copies.py` finds the copies and their nests, `plan.py` plans one
DMA per nest (the analysis, run over the whole module before anything changes, so
a copy that one DMA cannot do is an error at its store), `emit.py` builds it;
the pattern `InjectDma` replaces each planned nest.
"""

from __future__ import annotations

from dataclasses import dataclass
from tilecraft.backends.accel.spec import AccelSpec, default_spec, load_spec
from tilecraft.dialects.loop import (
    ForOp,
    buffer_scope,
)
from tilecraft.utils.diagnostics import OpError
from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from tilecraft.transforms.inject_dma.copies import Copy, copy_nest, element_scalars, match_copy
from tilecraft.transforms.inject_dma.plan import NestExprs, NotDma, Plan, plan_dma
from tilecraft.transforms.inject_dma.emit import emit_dma


PASS = "inject-dma"


# -- analysis, pattern and pass -------------------------------------------------


@dataclass
class CopyNest:
    """A copy nest and the DMA that replaces it."""

    copy: Copy
    loops: list[ForOp]
    elem: int
    plan: Plan
    nest: NestExprs


def find_copy_nests(module: ModuleOp, spec: AccelSpec) -> dict[ForOp, CopyNest]:
    """Every copy nest of the module by its outermost loop, planned; a copy that
    one DMA cannot do raises an `OpError` at its store (before anything changes)."""
    nests: dict[ForOp, CopyNest] = {}
    for store in module.walk():
        if not isinstance(store, memref.StoreOp):
            continue
        copy = match_copy(store)
        if copy is None:
            continue
        found = copy_nest(copy)
        scope = buffer_scope(copy.sram)
        direction = "into" if copy.is_load else "out of"
        if found is None:
            raise OpError(
                store,
                f"{PASS}: this copy {direction} the {scope.value} buffer is not a loop nest of its "
                "own (it has no loop, or its loops do other work too: run inject-dma before "
                "inject-virtual-threads and unrolling)",
            )
        loops, guards = found
        elem = element_scalars(spec, scope)
        planned = _plan_with_host_loops(copy, loops, guards, elem)
        if isinstance(planned, NotDma):
            raise OpError(
                store,
                f"{PASS}: this copy {direction} the {scope.value} buffer cannot be one DMA: {planned}; "
                "change the schedule (the accelerator moves whole elements in 2-D strided blocks)",
            ) from None
        inner, plan, nest = planned
        nests[inner[0]] = CopyNest(copy, inner, elem, plan, nest)
    return nests


def _plan_with_host_loops(copy: Copy, loops: list[ForOp], guards: list[SSAValue], elem: int):
    """The DMA of the whole nest or, when more than two loops are left after folding
    (a tile of several channel blocks, say), of its inner loops, the outer ones
    staying loops around it (as VTA's DMA injection leaves them to the host); the
    error of the whole nest when neither works."""
    first: NotDma | None = None
    for k in range(len(loops)):
        nest = NestExprs(loops[k], loops[k:])
        try:
            return loops[k:], plan_dma(copy, loops[k:], guards, elem, nest), nest
        except NotDma as e:
            first = first or e
            if "loops are left" not in str(e):
                break
    return first


@dataclass
class InjectDma(RewritePattern):
    """The copy nest whose outermost loop this is becomes one `loop.dma` (see the
    module docstring for the IR before and after)."""

    nests: dict[ForOp, CopyNest]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        found = self.nests.pop(op, None)
        if found is None:
            return
        dma = emit_dma(found.copy, found.loops, found.plan, found.elem, found.nest)
        rewriter.replace(op, dma, [])


@dataclass(frozen=True)
class InjectDmaPass(ModulePass):
    """Replace each copy nest between a global and an accelerator buffer by one `loop.dma`."""

    name = "inject-dma"

    spec: str = ""
    """The accelerator spec file (.json or .toml); VTA's default when empty."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        spec = load_spec(self.spec) if self.spec else default_spec()
        nests = find_copy_nests(op, spec)
        if nests:
            PatternRewriteWalker(GreedyRewritePatternApplier([InjectDma(nests)])).rewrite_module(op)
