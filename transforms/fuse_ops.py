"""fuse-ops: partition each function's graph ops into fused groups (TVM's FuseOps).

Every graph op (not weights and constants, which stay outside and become group
inputs) ends up in exactly one `graph.fused` op, so code generation only sees
groups; a group is one kernel, and a value that stays inside one is never
written to memory. plan-memory and convert-graph-to-te expect this.

The decisions are the fusion analysis's (`analysis/fusion.py`: post-dominator
tree, TVM's rules by fusion kind, convexity); this pass applies them:

1. graph ops whose results nobody uses are erased (they are Pure, but a
   graph.fused is a kernel call, so dce could not remove them once grouped);
2. the block's ops are put in the plan's order, where each group is contiguous;
3. the `FormFusedGroup` pattern replaces each group, at its first op, by one
   `graph.fused` whose region takes the group's inputs (weights included) as
   block arguments and yields the values used outside it.

With `enabled=false` every op is a group of its own (TVM's opt-level 0), so
plan-memory and convert-graph-to-te see groups with fusion off too.

```mlir
%y = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
%z = graph.add %y, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
%r = graph.relu %z : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
```
becomes
```mlir
%r = graph.fused "fused_conv2d_add_relu" (%x, %w, %b) : (...) -> (tensor<1x4x6x6xf32>) {
^bb0(%a: tensor<1x3x8x8xf32>, %c: tensor<4x3x3x3xf32>, %d: tensor<4x1x1xf32>):
  %0 = graph.conv2d %a, %c : ...
  %1 = graph.add %0, %d : ...
  %2 = graph.relu %1 : ...
  graph.yield %2 : tensor<1x4x6x6xf32>
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tilecraft.analysis.fusion import FusionGroup, FusionPlan, is_node, plan_fusion
from tilecraft.dialects import graph


@dataclass
class FormFusedGroup(RewritePattern):
    """The first op of a planned group (the group's ops contiguous after it)
    becomes a `graph.fused` holding them all:

    `%y = graph.dense %x, %w` `%r = graph.relu %y` becomes
    `%r = graph.fused "fused_dense_relu" (%x, %w) : ... { ... graph.yield %r1 }`."""

    starts: dict[Operation, FusionGroup]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        group = self.starts.pop(op, None)
        if group is None:
            return
        members = set(group.ops)
        inputs: list[SSAValue] = []
        outputs: list[SSAValue] = []
        for member in group.ops:
            for v in member.operands:
                if v.owner not in members and v not in inputs:
                    inputs.append(v)
            outputs.extend(r for r in member.results if any(u.operation not in members for u in r.uses))
        body = Block(arg_types=[v.type for v in inputs])
        fused = graph.FusedOp(group.name, inputs, [r.type for r in outputs], Region(body))
        fused.location = op.location  # errors about the group point at its first op
        rewriter.insert(fused, InsertPoint.before(op))
        for r, new in zip(outputs, fused.outputs):
            new.name_hint = r.name_hint
            rewriter.replace_uses_with_if(r, new, lambda use: use.operation not in members)
        for v, arg in zip(inputs, body.args):
            rewriter.replace_uses_with_if(v, arg, lambda use: use.operation in members)
        for member in group.ops:
            member.detach()
            body.add_op(member)
        body.add_op(graph.YieldOp(outputs))


def erase_dead_nodes(block: Block) -> None:
    """Erase graph compute ops whose results nobody reads, last first."""
    for op in reversed(list(block.ops)):
        if is_node(op) and not any(r.uses for r in op.results):
            Rewriter.erase_op(op)


def apply_plan(block: Block, plan: FusionPlan) -> None:
    """Put the block's ops in the plan's order, then form each group."""
    for op in plan.order:
        op.detach()
        block.add_op(op)
    walker = PatternRewriteWalker(FormFusedGroup(plan.group_starting_at()), apply_recursively=False)
    walker.rewrite_region(block.parent)  # type: ignore[arg-type]


@dataclass(frozen=True)
class FuseOpsPass(ModulePass):
    """Partition graph ops into fused groups by TVM's rules (analysis/fusion.py)."""

    name = "fuse-ops"

    max_depth: int = 16
    """The most ops one group may hold."""

    enabled: bool = True
    """False puts every op in a group of its own (fusion off, TVM's opt-level 0)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_depth < 1:
            raise PassFailedException(f"fuse-ops: max-depth must be at least 1, not {self.max_depth}")
        for f in op.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                block = f.body.block
                taken = {o.group_name.data for o in f.walk() if isinstance(o, graph.FusedOp)}
                erase_dead_nodes(block)
                apply_plan(block, plan_fusion(block, self.max_depth, self.enabled, taken))
