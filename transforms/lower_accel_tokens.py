"""`lower-accel-tokens`: `!accel.token` dependences become VTA's dependence flags.

A token from one module to another becomes a push on the producer and a pop on the
consumer, on the queue between the two modules; a token inside one module is implied by
stream order and dropped. Which edges are kept, so that the k-th pop on each queue
takes the k-th push, is decided once for the program by
`tilecraft.backends.accel.verify.plan_flags` (the algorithm is written up there); the
rewrite pattern then gives each instruction its flags and drops its token operands.

```mlir
%l = accel.load inp sram(0) dram(0) size(1, 16) stride(16)
%w = accel.load wgt sram(0) dram(0) size(1, 1) stride(1)
%g = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) after %l, %w
%s = accel.store out sram(0) dram(0) size(1, 1) stride(1) after %g
```
becomes
```mlir
%l = accel.load inp sram(0) dram(0) size(1, 16) stride(16)
%w = accel.load wgt sram(0) dram(0) size(1, 1) stride(1) flags(push_next)
%g = accel.gemm @k out 1 in 1 dst(0, 0) src(0, 0) wgt(0, 0) flags(pop_prev, push_next)
%s = accel.store out sram(0) dram(0) size(1, 1) stride(1) flags(pop_prev)
```
(the GEMM waits for the later of the two loads only: the load module runs in order).

Errors, each naming both ops (the program verifier finds them before the pass runs; the
pass reports them itself when verification is off): a token between the load and store
modules (no queue joins them), a token used before the instruction that makes it (the
order of that dependence cannot be kept).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.backends.accel.verify import plan_flags
from tilecraft.dialects.accel import InstructionOp, ProgramOp
from tilecraft.utils.diagnostics import OpError
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)


class TokensToFlags(RewritePattern):
    """An instruction with token operands or planned flags gets its planned flags and
    no token operands (same op, same results, same location)."""

    def __init__(self, plan: dict[InstructionOp, set[str]]):
        self.plan = plan

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, InstructionOp) or op not in self.plan and not op.deps:
            return
        flags = self.plan.pop(op, set())
        new = type(op).create(
            operands=[],
            result_types=[r.type for r in op.results],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        new.set_flags(sorted(op.flags() + list(flags)))
        new.location = op.location
        rewriter.replace(op, new, new.results)


@dataclass(frozen=True)
class LowerAccelTokensPass(ModulePass):
    name = "lower-accel-tokens"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for program in [p for p in op.walk() if isinstance(p, ProgramOp)]:
            try:
                plan = plan_flags(program)
            except OpError as e:  # the verifier reports these first unless it is off
                raise OpError(e.op, f"{self.name}: {e.message}") from None
            PatternRewriteWalker(TokensToFlags(plan), apply_recursively=False).rewrite_region(program.body)
