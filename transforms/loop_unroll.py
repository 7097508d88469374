"""`loop-unroll`: a `loop.for ... unrolled` becomes its body once per iteration.

Each copy of the body sees the induction variable as an `arith.constant`, so
indices into small "local" accumulators become constants and LLVM's SROA can keep
those buffers in registers. The loop is unrolled fully (its extent is static);
nested unrolled loops unroll inside out (the walk visits bodies before their
loops), so an outer loop copies a body that is already unrolled.

A loop of at most one iteration is "unrolled" whatever its kind: zero iterations
erase it, one iteration leaves its body with the variable a constant (how it
runs is then moot). With `trivial-only=true` the pass does only that: the
pipeline `loop-to-llvm` runs it so before `loop-outline-parallel` and
`loop-vectorize`, which then never see a trivial loop, and leaves the other
unrolled loops to LLVM (`convert-loop-to-llvm` marks them), so no pass works on
the copies. This pass shows the unrolled loop IR; run before
`convert-loop-to-llvm` it gives the same code.

```mlir
loop.for %j = 0 to 2 unrolled {
  memref.store %x, %C[%j] : memref<2xf32>
}
```
becomes
```mlir
%c0 = arith.constant 0 : index
memref.store %x, %C[%c0] : memref<2xf32>
%c1 = arith.constant 1 : index
memref.store %x, %C[%c1] : memref<2xf32>
```

A body copied more than `max-iterations` times (512 by default, the limit the
schedule checks) is refused: split the axis first. Buffers (`loop.alloc`) in
the body are copied with it; each copy lives until the end of the block the loop
was in, and `convert-loop-to-llvm` gives copies of one large local buffer one stack
slot (their uses do not overlap: each copy is used only by its iteration).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.dialects.sched_replay import MAX_UNROLL
from tilecraft.dialects.loop import ForOp, LoopKind
from tilecraft.utils.diagnostics import OpError
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint


def unroll_into(loop: ForOp, rewriter: PatternRewriter) -> None:
    """Insert one copy of `loop`'s body per iteration before `loop`, then erase it.

    The last iteration takes the body itself rather than a copy (cloning is the
    expensive part, and most loops unrolled here have one or two iterations)."""
    body: Block = loop.body.block
    last = loop.ub.data - 1
    for i in range(loop.lb.data, loop.ub.data):
        value = arith.ConstantOp(IntegerAttr(i, IndexType()))
        if loop.var.name_hint:
            value.result.name_hint = loop.var.name_hint
        rewriter.insert(value, InsertPoint.before(loop))
        if i == last:
            loop.var.replace_all_uses_with(value.result)
            assert body.last_op is not None
            rewriter.erase(body.last_op)  # the loop.yield
            rewriter.inline_block(body, InsertPoint.before(loop))
            break
        mapping: dict[SSAValue, SSAValue] = {loop.var: value.result}
        for op in body.ops:
            if op is body.last_op:  # the loop.yield
                break
            rewriter.insert(op.clone(mapping), InsertPoint.before(loop))
    rewriter.erase(loop)


def check_unroll_limit(module: ModuleOp, max_iterations: int) -> None:
    """Refuse (at the loop) an unrolled loop of more than `max_iterations`.

    Checked before rewriting: an error raised inside a pattern would reach the
    user wrapped in a dump of the whole module."""
    for op in module.walk():
        if isinstance(op, ForOp) and op.kind.data == LoopKind.UNROLLED:
            if op.extent > max_iterations:
                raise OpError(
                    op,
                    f"loop-unroll: the loop has {op.extent} iterations; unrolling more than "
                    f"{max_iterations} is refused — split it first or make it serial.",
                )


@dataclass(frozen=True)
class UnrollLoop(RewritePattern):
    """`loop.for ... unrolled` (or any loop of at most one iteration) → body copies."""

    trivial_only: bool = False

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if not op.is_static:
            return  # (an unrolled loop is static: the verifier says so)
        if op.extent <= 1 or (op.kind.data == LoopKind.UNROLLED and not self.trivial_only):
            unroll_into(op, rewriter)


def loop_unroll_patterns(trivial_only: bool = False) -> list[RewritePattern]:
    return [UnrollLoop(trivial_only)]


@dataclass(frozen=True)
class LoopUnrollPass(ModulePass):
    """Unroll every `loop.for ... unrolled` and every loop of at most one iteration."""

    name = "loop-unroll"

    max_iterations: int = MAX_UNROLL
    """The most copies of one loop body the pass makes."""

    trivial_only: bool = False
    """Unroll only the loops of at most one iteration."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_unroll_limit(op, self.max_iterations)
        # Inner loops first: an outer loop then copies a body already unrolled,
        # and one walk does it all.
        PatternRewriteWalker(
            GreedyRewritePatternApplier(loop_unroll_patterns(self.trivial_only)),
            walk_regions_first=True,
            apply_recursively=False,
        ).rewrite_module(op)
