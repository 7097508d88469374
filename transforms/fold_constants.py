"""fold-constants: replace graph ops whose operands are all known values by those values.

An op whose every operand is a `graph.constant` or a `graph.weight` computes the
same arrays on every run; its op folder (`dialects/graph_folders.py`: the op's
meaning in the graph evaluator) computes them once, here. One pattern,
`FoldToValues`, applied in program order, so chains of foldable ops collapse into
one value:

- a result of at most `max-inline-elements` elements (default 16) becomes an
  inline `graph.constant`;
- a larger one becomes a new `graph.weight` whose array is added to the module's
  weight store (named after the first weight it came from, e.g.
  `fc.weight.transpose`); without a store the op stays.

`canonicalize` applies the same folders, but only for small results (a fold
creates no weights); this pass is the one that turns the layout transforms
alter-layout leaves on weights into packed weights of the store. Reading weights
needs the module's store; without one, only ops on inline constants fold. A
constant or weight left without users is erased.

```mlir
%w = graph.weight "fc.weight" : tensor<4x8xf32>
%t = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
%a = graph.constant dense<2.0> : tensor<2xf32>
%b = graph.mul %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
```
becomes
```mlir
%t = graph.weight "fc.weight.transpose" : tensor<8x4xf32>
%b = graph.constant dense<4.000000e+00> : tensor<2xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.utils.exceptions import PassFailedException

from tilecraft.dialects import graph
from tilecraft.dialects.graph_folders import fold_arrays, foldable, result_sizes
from tilecraft.dialects.graph_values import MAX_INLINE_ELEMENTS, value_op
from tilecraft.utils.weights import WeightStore, pass_store

NAME = "fold-constants"


def _name_hint(op: Operation) -> str:
    short = op.name.removeprefix("graph.")
    for v in op.operands:
        if isinstance(v.owner, graph.WeightOp):
            return f"{v.owner.weight_name.data}.{short}"
    return f"folded.{short}"


@dataclass
class FoldToValues(RewritePattern):
    """A graph op on constants and weights becomes the constants or new weights it
    computes; producers it leaves unused are erased.

    `%r = graph.relu %c` with `%c = graph.constant dense<[1.0, -3.0]>` becomes
    `%r = graph.constant dense<[1.0, 0.0]>`."""

    store: WeightStore | None
    max_inline: int = MAX_INLINE_ELEMENTS

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, graph.GraphOp) or not foldable(op):
            return
        sizes = result_sizes(op)
        assert sizes is not None
        if self.store is None and max(sizes) > self.max_inline:
            return  # a large value needs a store to live in
        values = fold_arrays(op, self.store, NAME)
        if values is None:
            return
        new_ops = [value_op(v, r.type, self.store, _name_hint(op), self.max_inline) for v, r in zip(values, op.results)]
        producers = [v.owner for v in op.operands]
        rewriter.replace(op, new_ops, [o.results[0] for o in new_ops])
        for p in dict.fromkeys(producers):
            if isinstance(p, Operation) and p.parent is not None and not any(r.uses for r in p.results):
                rewriter.erase(p)


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Replace graph ops on constants and weights by the values they compute."""

    name = "fold-constants"

    max_inline_elements: int = MAX_INLINE_ELEMENTS
    """Results with at most this many elements become graph.constant, larger ones weights."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_inline_elements < 0:
            raise PassFailedException(f"{NAME}: max-inline-elements must be at least 0, not {self.max_inline_elements}")
        pattern = FoldToValues(pass_store(op, NAME), self.max_inline_elements)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
