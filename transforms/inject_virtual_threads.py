"""`inject-virtual-threads`: a `loop.for ... vthread` becomes one sequential
program in which its threads' statements are interleaved (TVM's
InjectVirtualThread, as VTA uses it with "cthread").

Virtual threads are how a schedule asks for latency hiding on an accelerator
whose load, compute and store modules run concurrently: with two threads, the
loads of thread 1 sit next to the compute of thread 0 in the instruction
stream, and dependence tokens (inserted later) let them overlap. On the CPU the
result computes exactly what the serial loop computes.

The rewrite pushes the thread loop inward, as TVM's does:

- a `loop.for` in its body is kept once (its variable is shared by the threads),
  and its body is rewritten the same way;
- a `loop.guard` whose condition does not depend on the thread likewise;
- a `loop.alloc` is made once per thread: each thread gets its own buffer,
  named `<name>.vt<i>` (TVM multiplies the buffer by the thread count; here the
  copies are separate SSA buffers, so every use, a `loop.dma` or a tensor
  intrinsic's call included, just takes its thread's buffer);
- an index computation or other side-effect-free op that does not depend on the
  thread is kept once; everything else (stores, loads, DMAs, calls, a guard on
  the thread) is emitted once per thread, thread 0 first, each copy with the
  thread variable a constant and its own buffers.

So `for t < 2 { S1(t); for k { S2(t, k) } }` becomes
`S1(0); S1(1); for k { S2(0, k); S2(1, k) }`. The threads are assumed to be
independent (the thread axis is a spatial axis of the stage: threads write
disjoint elements), which is what makes the serial loop and the interleaving
compute the same thing; the schedule check (`sched.vthread` of a spatial axis
only) guarantees it.

```mlir
loop.for %t = 0 to 2 vthread {
  %b = loop.alloc "B.inp" inp_buffer : memref<16xi8>
  loop.dma %A[%off(%t)] -> %b[%c0] ...
  loop.for %k = 0 to 4 { ... memref.load %b[...] ... }
}
```
becomes
```mlir
%t0 = arith.constant 0 : index
%t1 = arith.constant 1 : index
%b0 = loop.alloc "B.inp.vt0" inp_buffer : memref<16xi8>
%b1 = loop.alloc "B.inp.vt1" inp_buffer : memref<16xi8>
loop.dma %A[%off(%t0)] -> %b0[%c0] ...
loop.dma %A[%off(%t1)] -> %b1[%c0] ...
loop.for %k = 0 to 4 { ... memref.load %b0[...] ... ; ... memref.load %b1[...] ... }
```
The threads' copies of a statement carry `tc.vthread = i` so later passes (and
tests) can tell them apart. A loop of more than `max-threads` threads is refused:
every statement is copied that many times.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tilecraft.dialects.loop import AllocOp, ForOp, GuardOp, LoopKind, YieldOp
from tilecraft.utils.diagnostics import OpError
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import is_side_effect_free

PASS = "inject-virtual-threads"

Insert = Callable[[Operation], None]


class ThreadExpansion:
    """The state of one vthread loop's rewrite: each thread's value map and the
    values that differ between threads."""

    def __init__(self, var: SSAValue, threads: list[SSAValue]):
        self.maps: list[dict[SSAValue, SSAValue]] = [{var: t} for t in threads]
        self.per_thread: set[SSAValue] = {var}

    def _touched(self, op: Operation) -> bool:
        for inner in op.walk():
            if any(v in self.per_thread for v in inner.operands):
                return True
        return False

    def expand(self, block: Block, insert: Insert) -> None:
        for op in block.ops:
            if isinstance(op, YieldOp):
                continue
            if isinstance(op, ForOp):
                self._push_into_loop(op, insert)
            elif isinstance(op, GuardOp) and op.cond not in self.per_thread:
                self._push_into_guard(op, insert)
            elif not isinstance(op, AllocOp) and is_side_effect_free(op) and not self._touched(op):
                clone = op.clone(value_mapper=self.maps[0])
                insert(clone)
                for m in self.maps[1:]:
                    m.update(zip(op.results, clone.results))
            else:
                for n, m in enumerate(self.maps):
                    clone = op.clone(value_mapper=m)
                    clone.attributes["tc.vthread"] = IntegerAttr(n, i64)
                    if isinstance(clone, AllocOp):
                        # Its own name: buffers of one name may share memory
                        # (convert-loop-to-llvm's stack slots for unrolled copies).
                        clone.buffer_name = StringAttr(f"{op.buffer_name.data}.vt{n}")
                    insert(clone)
                self.per_thread.update(op.results)

    def _push_into_loop(self, op: ForOp, insert: Insert) -> None:
        new = ForOp(op.lb.data, op.ub.data, op.kind, var_name=op.var.name_hint)
        new.attributes.update(op.attributes)
        for m in self.maps:
            m[op.var] = new.var
        insert(new)
        self.expand(op.body.block, _before(new.body.block.last_op))

    def _push_into_guard(self, op: GuardOp, insert: Insert) -> None:
        new = GuardOp(self.maps[0].get(op.cond, op.cond))
        new.attributes.update(op.attributes)
        insert(new)
        self.expand(op.body.block, _before(new.body.block.last_op))


def _before(anchor: Operation) -> Insert:
    def insert(op: Operation) -> None:
        anchor.parent_block().insert_op_before(op, anchor)

    return insert


@dataclass
class InjectVirtualThread(RewritePattern):
    """One `loop.for ... vthread` becomes its body with the threads interleaved
    (see the module docstring for the IR before and after)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.kind.data != LoopKind.VTHREAD:
            return
        threads = []
        for n in range(op.lb.data, op.ub.data):
            c = arith.ConstantOp(IntegerAttr(n, IndexType()))
            c.result.name_hint = f"{op.var.name_hint or 'vt'}{n}"
            rewriter.insert(c, InsertPoint.before(op))
            threads.append(c.result)
        expansion = ThreadExpansion(op.var, threads)
        new_ops: list[Operation] = []
        expansion.expand(op.body.block, new_ops.append)
        rewriter.insert(new_ops, InsertPoint.before(op))
        rewriter.erase(op)


@dataclass(frozen=True)
class InjectVirtualThreadsPass(ModulePass):
    """Interleave the threads of every `vthread` loop in one sequential program."""

    name = "inject-virtual-threads"

    max_threads: int = 16
    """The most threads a loop may have (each statement is copied per thread)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in op.walk():
            if isinstance(loop, ForOp) and loop.kind.data == LoopKind.VTHREAD and loop.extent > self.max_threads:
                raise OpError(
                    loop,
                    f"{PASS}: {loop.extent} virtual threads, more than max-threads={self.max_threads}; "
                    "each statement is emitted once per thread: bind a shorter axis (split it first)",
                )
        PatternRewriteWalker(
            GreedyRewritePatternApplier([InjectVirtualThread()], dce_enabled=False)
        ).rewrite_module(op)
