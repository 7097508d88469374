"""alter-layout's pattern for `graph.dense`: a known NK weight read as KN, or
packed in panels of 64 columns (NK64n), except where the package's docstring
says NK is faster (a GEMV, an N that is not whole vectors).
"""

from __future__ import annotations

import math

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from tilecraft.dialects import graph
from tilecraft.dialects.graph_values import erase_if_dead, known_value
from tilecraft.topi.dense import LANES as DOT_LANES, pack_dense_weight
from tilecraft.transforms.alter_layout.layouts import NAME, LayoutState, ranked


class KnDense(RewritePattern):
    def __init__(self, state: LayoutState):
        self.state = state

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.DenseOp, rewriter: PatternRewriter) -> None:
        if ranked([*op.operands, *op.results]):
            self.dense(op, rewriter)

    def dense(self, dense: graph.DenseOp, rewriter: PatternRewriter) -> bool:
        """A dense with a known NK weight reads it as KN, unless it is a GEMV or its
        N is not whole vectors (see the module docstring)."""
        if dense.weight_layout != graph.WeightLayout.NK:
            return False
        w = dense.weight
        x_shape = dense.input.type.get_shape()
        n = w.type.get_shape()[0]
        if x_shape[-1] % DOT_LANES == 0 and (math.prod(x_shape[:-1]) == 1 or n % DOT_LANES):
            return False
        weight = known_value(w, self.state.store, NAME)
        if weight is None:
            return False
        layout = graph.WeightLayout.NK64n if weight.shape[0] % graph.PANEL == 0 else graph.WeightLayout.KN
        w_op = self.state.new_value(pack_dense_weight(weight, layout), w, str(layout))
        operands = [dense.input, w_op.results[0], *graph.present(dense.bias)]
        new = dense.with_properties(operands, weight_layout=layout)
        rewriter.replace(dense, [w_op, new])
        erase_if_dead([w], rewriter)
        return True
