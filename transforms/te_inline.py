"""te-inline: carry out `sched.compute_inline` by substituting expressions.

An inlined stage has no loops and no buffer: every `te.read` of it becomes a copy
of its body with the read's indices in place of its axes (TVM's compute_inline).
This pass is the only place that happens; convert-te-to-loop rejects a schedule
that still inlines a te.compute.

The decision is the schedule's: replaying it (`dialects.sched_replay`) reports an
invalid schedule at its op and names the te.computes to inline (a compute_inline
of a cache copy stage is not an expression to substitute: it stays, for
convert-te-to-loop). Then, per function, the compute_inline ops and the stage
handles of the inlined computes leave the schedule; `InlineRead`, one producer /
consumer pair per application, replaces each te.read of an inlined compute by its
body (the copies of reads it brings along are matched in turn, so chains of
inlined stages collapse); and the inlined computes, read by nothing then, go.

```mlir
%B = te.compute "B" (%i: "i") -> tensor<8xf32> {
  %a = te.read %A[%i] : tensor<8xf32>
  %e = math.exp %a : f32
  te.yield %e : f32
}
%C = te.compute "C" (%i: "i") -> tensor<8xf32> {
  %b = te.read %B[%i] : tensor<8xf32>
  ...
sched.schedule {
  %s = sched.stage %B : tensor<8xf32>
  sched.compute_inline %s
}
```
becomes a `C` whose body reads `%A` and applies `math.exp` itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from tilecraft.dialects.sched_replay import ScheduleState, find_schedule
from tilecraft.dialects import sched, te
from tilecraft.utils.diagnostics import OpError


def inlined_computes(func_op: func.FuncOp) -> list[te.ComputeOp]:
    """The te.computes the function's schedule inlines, in program order; drops
    their compute_inline ops and stage handles from the schedule."""
    schedule = find_schedule(func_op)
    if schedule is None or not any(
        isinstance(op, sched.ComputeInlineOp) for op in schedule.body.block.ops
    ):
        return []
    # The replay reports a bad schedule at its op, and tells which compute_inline
    # ops inline a te.compute; those of copy stages stay for convert-te-to-loop.
    inlines = ScheduleState.replay(schedule, func_op).inlined_computes
    stage_ops: dict[SSAValue, sched.StageOp] = {
        op.stage: op for op in schedule.body.block.ops if isinstance(op, sched.StageOp)
    }
    targets: list[te.ComputeOp] = []
    for op in inlines:
        stage_op = stage_ops.get(op.stage)
        if stage_op is None or not isinstance(stage_op.tensor.owner, te.ComputeOp):
            raise OpError(op, "te-inline: sched.compute_inline needs the stage of a te.compute.")
        targets.append(stage_op.tensor.owner)
    for op in inlines:
        Rewriter.erase_op(op)
    for producer in targets:
        for use in list(producer.result.uses):
            stage_op = use.operation
            if not isinstance(stage_op, sched.StageOp):
                continue
            if stage_op.stage.uses:
                user = next(iter(stage_op.stage.uses)).operation
                raise OpError(
                    user,
                    f"te-inline: stage '{producer.tensor_name.data}' is inlined and cannot be scheduled.",
                )
            Rewriter.erase_op(stage_op)
    order = te.compute_ops(func_op)
    return sorted(targets, key=order.index)


@dataclass
class InlineRead(RewritePattern):
    """A read of an inlined te.compute becomes that compute's body at the read's
    indices.

    ```mlir
    %b = te.read %B[%y] : tensor<8xf32>      // %B = te.compute ... { exp(A[%i]) }
    ```
    becomes
    ```mlir
    %a = te.read %A[%y] : tensor<8xf32>
    %b = math.exp %a : f32
    ```
    """

    inlined: set[te.ComputeOp]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: te.ReadOp, rewriter: PatternRewriter) -> None:
        producer = op.tensor.owner
        if producer not in self.inlined:
            return
        assert isinstance(producer, te.ComputeOp)
        mapping: dict[SSAValue, SSAValue] = dict(zip(producer.body.block.args, op.indices))
        clones: list[Operation] = []
        for body_op in producer.body.block.ops:
            if isinstance(body_op, te.YieldOp):
                rewriter.replace(op, clones, [mapping.get(body_op.value, body_op.value)])
                return
            clones.append(body_op.clone(value_mapper=mapping))
        raise AssertionError("te bodies end with te.yield")


@dataclass(frozen=True)
class TeInlinePass(ModulePass):
    """Inline every te.compute that its function's schedule marks compute_inline."""

    name = "te-inline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        targets = [c for f in list(op.walk()) if isinstance(f, func.FuncOp) for c in inlined_computes(f)]
        if not targets:
            return
        # No dead-code elimination in the walk: only what the schedule inlines goes.
        patterns = GreedyRewritePatternApplier([InlineRead(set(targets))], dce_enabled=False)
        PatternRewriteWalker(patterns).rewrite_module(op)
        for producer in reversed(targets):  # readers of a chain first
            if producer.result.uses:
                user = next(iter(producer.result.uses)).operation
                raise OpError(
                    user,
                    f"te-inline: '{producer.tensor_name.data}' is still used after inlining.",
                )
            Rewriter.erase_op(producer)
