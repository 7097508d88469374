"""te-inline: carry out `sched.compute_inline` by substituting expressions.

An inlined stage has no loops and no buffer: every `te.read` of it becomes a copy
of its body with the read's indices in place of its axes (TVM's compute_inline).
The pass replays the schedule first, so an invalid schedule is reported at its op,
then rewrites each inlined compute into its readers, in program order (so chains
of inlined stages collapse), and deletes it with its schedule ops.

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
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tilecraft.analysis.schedule import ScheduleState, find_schedule
from tilecraft.dialects import sched, te
from tilecraft.utils.diagnostics import OpError


def inline_compute(producer: te.ComputeOp) -> None:
    """Replace every te.read of `producer` by its body, then erase it."""
    for use in list(producer.result.uses):
        read = use.operation
        if not isinstance(read, te.ReadOp):
            continue
        mapping: dict[SSAValue, SSAValue] = dict(zip(producer.body.block.args, read.indices))
        for op in producer.body.block.ops:
            if isinstance(op, te.YieldOp):
                Rewriter.replace_op(read, [], [mapping[op.value]])
                break
            clone = op.clone(value_mapper=mapping)
            Rewriter.insert_op(clone, InsertPoint.before(read))
    if any(not isinstance(u.operation, (sched.StageOp,)) for u in producer.result.uses):
        raise OpError(producer, f"te-inline: '{producer.tensor_name.data}' is still used after inlining.")


def inline_function(func_op: func.FuncOp) -> None:
    schedule = find_schedule(func_op)
    if schedule is None:
        return
    if not any(isinstance(op, sched.ComputeInlineOp) for op in schedule.body.block.ops):
        return
    # The replay reports a bad schedule at its op, and tells which compute_inline
    # ops inline a te.compute; those of copy stages stay for convert-te-to-loop.
    inlines = ScheduleState.replay(schedule, func_op).inlined_computes
    if not inlines:
        return
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
    order = te.compute_ops(func_op)
    for producer in sorted(targets, key=order.index):
        inline_compute(producer)
        for use in list(producer.result.uses):
            stage_op = use.operation
            assert isinstance(stage_op, sched.StageOp)
            if stage_op.stage.uses:
                user = next(iter(stage_op.stage.uses)).operation
                raise OpError(user, f"te-inline: stage '{producer.tensor_name.data}' is inlined and cannot be scheduled.")
            Rewriter.erase_op(stage_op)
        Rewriter.erase_op(producer)


@dataclass(frozen=True)
class TeInlinePass(ModulePass):
    """Inline every te.compute that its function's schedule marks compute_inline."""

    name = "te-inline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp):
                inline_function(f)
