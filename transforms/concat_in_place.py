"""concat-in-place: a concat whose operands are kernel results is no kernel: its
producers write straight into the parts of its buffer.

After fuse-ops a channel concat (SqueezeNet's fire modules, DenseNet's growing
feature maps, ShuffleNet's branches) is a group of its own that copies every
operand once more: SqueezeNet spends a tenth of its time in such copies, a
DenseNet block's copies grow with the square of its depth. Where the operands lie
side by side in the concat's buffer (every axis before the concat axis has extent
1, so each operand is one contiguous run of bytes), the kernels that produce them
can write there directly. This pass takes such a group apart into a top-level
`graph.concat {tc.in_place}`, which no kernel computes: plan-memory places each
operand at its byte offset in the concat's buffer, and bufferize-graph-function
makes the concat a view of that buffer.

`ConcatInPlace` takes a group whose body is one `graph.concat` of its arguments
when:

- the concat is not returned (a returned value lives in the caller's buffer);
- every operand is a distinct result of a kernel (a `graph.fused` group) or of
  another in-place concat, not returned, computed from the function's inputs (so
  fold-constant-kernels does not turn its producer into a weight), and not already
  a part of another in-place concat (a value has one place);
- the operands' byte offsets in the concat are multiples of 64 (what the arena
  aligns every buffer to, and the kernels' vector loads expect).

```mlir
%a = graph.fused "fused_conv2d_relu" (%x, %w) : (...) -> (tensor<1x4x8x8x16xf32>) {...}
%b = graph.fused "fused_conv2d_relu_1" (%x, %v) : (...) -> (tensor<1x4x8x8x16xf32>) {...}
%c = graph.fused "fused_concat" (%a, %b) : (...) -> (tensor<1x8x8x8x16xf32>) {
^bb0(%p: tensor<1x4x8x8x16xf32>, %q: tensor<1x4x8x8x16xf32>):
  %r = graph.concat %p, %q {axis = 1 : i64} : (...) -> tensor<1x8x8x8x16xf32>
  graph.yield %r : tensor<1x8x8x8x16xf32>
}
```
becomes `%c = graph.concat %a, %b {axis = 1 : i64, tc.in_place} : (...) -> tensor<1x8x8x8x16xf32>`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType, UnitAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from tilecraft.dialects import graph
from tilecraft.utils.aligned import ALIGNMENT

IN_PLACE = "tc.in_place"
ALIGN = ALIGNMENT  # bytes (plan-memory's alignment of every buffer)


def is_in_place(op: Operation) -> bool:
    """A top-level concat that no kernel computes (its operands live in its buffer)."""
    return isinstance(op, graph.ConcatOp) and IN_PLACE in op.attributes


def element_bytes(t: TensorType) -> int:
    element = t.get_element_type()
    width = element.width.data if isinstance(element, IntegerType) else element.bitwidth
    return max(1, (width + 7) // 8)


def part_offsets(concat: graph.ConcatOp) -> list[int] | None:
    """Each operand's byte offset in the concat's buffer, or None where the operands
    are not contiguous runs of it (an axis before the concat axis has extent > 1)."""
    out = concat.outputs[0].type
    if not isinstance(out, TensorType):
        return None
    shape = out.get_shape()
    axis = concat.axis % len(shape) if shape else 0
    if any(d < 0 for d in shape) or math.prod(shape[:axis]) != 1:
        return None
    offsets, at = [], 0
    for v in concat.inputs:
        offsets.append(at)
        at += math.prod(v.type.get_shape()) * element_bytes(out)
    return offsets


def _lone_concat(group: graph.FusedOp) -> graph.ConcatOp | None:
    """The concat a group holds, if it is all the group does (of its arguments, each
    once, in order)."""
    ops = list(group.body.block.ops)
    if len(ops) != 2 or not isinstance(ops[0], graph.ConcatOp):
        return None
    concat, term = ops
    args = list(group.body.block.args)
    if list(concat.inputs) != args or len(set(args)) != len(args):
        return None
    if not isinstance(term, graph.YieldOp) or list(term.values) != list(concat.outputs):
        return None
    return concat


@dataclass
class ConcatInPlace(RewritePattern):
    """A lone-concat group whose operands can live in its buffer becomes a top-level
    `graph.concat {tc.in_place}` (the conditions: module docstring)."""

    claimed: set[SSAValue] = field(default_factory=set)  # values that are a concat's part
    _live: dict[SSAValue, bool] = field(default_factory=dict)

    def _from_inputs(self, v: SSAValue) -> bool:
        """Whether `v` is computed from a block argument (not weights and constants alone)."""
        stack, seen = [v], set()
        while stack:
            u = stack.pop()
            if u in seen:
                continue
            if u in self._live:
                if self._live[u]:
                    return True
                continue
            seen.add(u)
            if not isinstance(u.owner, Operation):
                self._live[u] = True
                return True
            stack.extend(u.owner.operands)
        for u in seen:  # every value reached depends on weights and constants alone
            self._live[u] = False
        return False

    def _part_ok(self, v: SSAValue, returned: set[SSAValue]) -> bool:
        owner = v.owner
        kernel = isinstance(owner, graph.FusedOp) or (isinstance(owner, Operation) and is_in_place(owner))
        return kernel and v not in returned and v not in self.claimed and self._from_inputs(v)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.FusedOp, rewriter: PatternRewriter) -> None:
        f = op.parent_op()
        concat = _lone_concat(op)
        if concat is None or not isinstance(f, func.FuncOp):
            return
        ret = f.body.block.last_op
        returned = set(ret.operands) if isinstance(ret, func.ReturnOp) else set()
        parts = list(op.inputs)
        offsets = part_offsets(concat)
        if op.outputs[0] in returned or offsets is None or any(o % ALIGN for o in offsets):
            return
        if len(set(parts)) != len(parts) or not all(self._part_ok(v, returned) for v in parts):
            return
        new = graph.ConcatOp(parts, dict(concat.properties), [r.type for r in op.outputs],
                             attributes={**op.attributes, IN_PLACE: UnitAttr()})  # fmt: skip
        new.location = op.location
        self.claimed.update(parts)
        rewriter.replace(op, new)
        new.outputs[0].name_hint = op.outputs[0].name_hint


@dataclass(frozen=True)
class ConcatInPlacePass(ModulePass):
    """Let kernels write a concat's operands into its buffer (module docstring)."""

    name = "concat-in-place"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ConcatInPlace(), apply_recursively=False).rewrite_module(op)
