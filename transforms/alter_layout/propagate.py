"""alter-layout's patterns that carry blocked values on: elementwise ops and
pooling computed on the blocked values, channel concats of whole blocks, and
layout transforms that compose or cancel.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tilecraft.dialects import graph
from tilecraft.transforms.alter_layout.layouts import (
    BINARY, POOLS, UNARY, LayoutState, blocked, keeps_zeros, ranked, unblocked_source,
)  # fmt: skip


class BlockElementwise(RewritePattern):
    """A unary or binary elementwise op, or a pooling, with a blocked operand."""

    def __init__(self, state: LayoutState):
        self.state = state

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, (*UNARY, *BINARY, *POOLS)) and ranked([*op.operands, *op.results]):
            self.layout_agnostic(op, rewriter)

    def layout_agnostic(self, op: graph.GraphOp, rewriter: PatternRewriter) -> bool:
        """An elementwise op or pooling with a blocked operand, on the blocked values."""
        out_shape = graph.shape_of(op.outputs[0].type)
        if len(op.outputs) != 1 or len(out_shape) != 4:
            return False
        sources = [unblocked_source(v) for v in op.inputs]
        blocks = {s[1] for s in sources if s is not None}
        if len(blocks) != 1:
            return False  # no blocked operand, or two different blocks
        (b,) = blocks
        if out_shape[1] % b and not keeps_zeros(op):
            return False  # (the padded channels of the operands must stay zero)
        if isinstance(op, POOLS):
            if op.layout != "NCHW":
                return False
            new = op.with_properties([sources[0][0]], layout=blocked(b))
        else:
            operands = []
            for v, source in zip(op.inputs, sources):
                if source is not None:
                    operands.append(source[0])
                    continue
                moved = self.state.blocked_constant(v, b, out_shape, op, rewriter)
                if moved is None and graph.shape_of(v.type) == out_shape:
                    moved = self.state.to_blocked(v, b, op, rewriter)
                if moved is None:
                    return False
                operands.append(moved)
            new = op.with_properties(operands)
        self.state.replace_blocked(op, [new], new.outputs[0], b, rewriter)
        return True


class BlockConcat(RewritePattern):
    """A concat along the channels of whole blocks, one of them blocked."""

    def __init__(self, state: LayoutState):
        self.state = state

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConcatOp, rewriter: PatternRewriter) -> None:
        if ranked([*op.operands, *op.results]):
            self.concat(op, rewriter)

    def concat(self, op: graph.ConcatOp, rewriter: PatternRewriter) -> bool:
        """A channel concat of blocked values on their blocks (axis 1 of NCHW<b>c is
        the channel blocks), where every operand is whole blocks; plain operands
        are transformed in."""
        out_shape = graph.shape_of(op.outputs[0].type)
        if len(out_shape) != 4 or op.axis % 4 != 1:
            return False
        sources = [unblocked_source(v) for v in op.inputs]
        blocks = {s[1] for s in sources if s is not None}
        if len(blocks) != 1:
            return False
        (b,) = blocks
        if any(graph.shape_of(v.type)[1] % b for v in op.inputs):
            return False
        operands = [s[0] if s is not None else self.state.to_blocked(v, b, op, rewriter) for v, s in zip(op.inputs, sources)]
        new = op.with_properties(operands, axis=1)
        self.state.replace_blocked(op, [new], new.outputs[0], b, rewriter)
        return True


class ComposeTransforms(RewritePattern):
    """A layout transform of a layout transform."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.LayoutTransformOp, rewriter: PatternRewriter) -> None:
        if ranked([*op.operands, *op.results]):
            self.compose(op, rewriter)

    def compose(self, op: graph.LayoutTransformOp, rewriter: PatternRewriter) -> bool:
        """A transform of a transform: one transform, or none when they cancel."""
        inner = op.inputs[0].owner
        if not isinstance(inner, graph.LayoutTransformOp):
            return False
        src, dst = inner.src, op.dst
        if src == dst:
            rewriter.replace(op, [], [inner.inputs[0]])
        else:
            rewriter.replace(op, graph.LayoutTransformOp([inner.inputs[0]], {"src": src, "dst": dst}))
        if not inner.outputs[0].uses:
            rewriter.erase(inner)
        return True
