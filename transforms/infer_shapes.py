"""infer-shapes: recompute every graph op's result types from its operands.

Each graph op knows its shape rule (`GraphOp.infer`); this pass applies them in
program order, so a result written `tensor<*xf32>` in hand-written IR (or left
stale by a rewrite) gets its type and its users see it. A `graph.fused` first
gives its region arguments its operands' types, infers its body and takes its
result types from the `graph.yield`. Last, each function's result types become
what its `func.return` returns. A shape error is reported at the op:
`infer-shapes: graph.add: shapes (2, 3) and (4,) do not broadcast`.

```mlir
%y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<*xf32>
%r = graph.relu %y : (tensor<*xf32>) -> tensor<*xf32>
```
becomes
```mlir
%y = graph.conv2d %x, %w {...} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
%r = graph.relu %y : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilecraft.dialects import graph
from tilecraft.utils.diagnostics import OpError


def _retype(value: SSAValue, new_type) -> None:
    if value.type != new_type:
        Rewriter.replace_value_with_new_type(value, new_type)


def infer_block(block: Block, pass_name: str = "infer-shapes") -> None:
    """Give every graph op in `block` (and in fused regions) its inferred result types."""
    for op in block.ops:
        if isinstance(op, graph.FusedOp):
            body = op.body.block
            for arg, operand in zip(body.args, op.inputs, strict=True):
                _retype(arg, operand.type)
            infer_block(body, pass_name)
            term = body.last_op
            if not isinstance(term, graph.YieldOp) or len(term.values) != len(op.outputs):
                raise OpError(op, f"{pass_name}: graph.fused must end with a graph.yield of one value per result")
            for result, value in zip(op.outputs, term.values):
                _retype(result, value.type)
        elif isinstance(op, graph.GraphOp):
            try:
                op.check_symbolic([v.type for v in op.inputs])
                types = op.infer([v.type for v in op.inputs])
            except graph.ShapeError as e:
                raise OpError(op, f"{pass_name}: {op.name}: {e}") from None
            if len(types) != len(op.outputs):
                raise OpError(op, f"{pass_name}: {op.name} has {len(op.outputs)} results but produces {len(types)}")
            for result, t in zip(op.outputs, types):
                _retype(result, t)


def infer_function(func_op: func.FuncOp, pass_name: str = "infer-shapes") -> None:
    """Infer a function's body, then make its result types what it returns."""
    if func_op.is_declaration:
        return
    infer_block(func_op.body.block, pass_name)
    func_op.update_function_type()


@dataclass(frozen=True)
class InferShapesPass(ModulePass):
    """Recompute the result types of every graph op and function."""

    name = "infer-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp):
                infer_function(f)
