"""`fold-constant-kernels`: a kernel call whose inputs are all constants is
computed once, at compile time, and its results become weights.

After convert-graph-to-te the graph function is a line of `func.call`s of te
kernels. fold-constants has already folded what it could at the graph level;
what is left with only `graph.weight`/`graph.constant` operands (a layout
transform of a weight inside a fused group, a constant fed through a group that
fold-constants does not evaluate) would otherwise run on every model call. The
pattern evaluates the kernel with the numpy reference evaluator
(`backends/reference.py`, which the compiled code is tested against), adds the
results to the module's weight store and replaces the call by `graph.weight`s.
Constants and kernels that nobody uses any more are erased.

```mlir
%w = graph.weight "conv.weight" : tensor<8x4x3x3xf32>
%p = func.call @layout_transform_0(%w) : (tensor<8x4x3x3xf32>) -> tensor<1x1x3x3x4x8xf32>
```
becomes
```mlir
%p = graph.weight "layout_transform_0.result0" : tensor<1x1x3x3x4x8xf32>
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from tilecraft.dialects import graph
from tilecraft.dialects.graph_values import known_value
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.weights import WeightStore, attach, pass_store

NAME = "fold-constant-kernels"
_CONSTANT_OPS = (graph.WeightOp, graph.ConstantOp)


def _kernels(module: ModuleOp) -> dict[str, func.FuncOp]:
    """The te kernels of `module` by name (functions holding a te.compute)."""
    from tilecraft.dialects.te import ComputeOp

    return {
        f.sym_name.data: f
        for f in module.ops
        if isinstance(f, func.FuncOp) and any(isinstance(op, ComputeOp) for op in f.walk())
    }


@dataclass
class FoldConstantCall(RewritePattern):
    """`func.call @kernel(constants...)` -> `graph.weight`s of its evaluated results."""

    module: ModuleOp
    kernels: dict[str, func.FuncOp]
    folded: set[str] = field(default_factory=set)  # kernels some call of which was folded

    def store(self) -> WeightStore:
        store = pass_store(self.module, NAME)
        if store is None:
            store = WeightStore()
            attach(self.module, store)
        return store

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        kernel = self.kernels.get(op.callee.root_reference.data)
        if kernel is None:
            return
        producers = [v.owner for v in op.arguments]
        if not all(isinstance(p, _CONSTANT_OPS) for p in producers):
            return
        from tilecraft.backends.reference import EvaluationError, evaluate

        store = pass_store(self.module, NAME)
        values = []
        for v in op.arguments:
            value = known_value(v, store, NAME)
            if value is None:
                raise OpError(v.owner, f"{NAME}: the module names no weight store to read it from")
            values.append(np.asarray(value).reshape(v.type.get_shape()))
        try:
            results = evaluate(kernel, values)
        except (EvaluationError, ValueError) as e:
            raise OpError(op, f"{NAME}: cannot evaluate @{kernel.sym_name.data} at compile time: {e}") from None
        store = self.store()
        weights = []
        for n, (result, value) in enumerate(zip(op.results, results)):
            name = store.add(np.asarray(value), f"{kernel.sym_name.data}.result{n}")
            weights.append(graph.WeightOp(name, result.type))
        rewriter.replace_matched_op(weights, [w.results[0] for w in weights])
        self.folded.add(kernel.sym_name.data)
        for producer in set(producers):
            if not any(r.uses for r in producer.results):
                rewriter.erase_op(producer)


def erase_uncalled(module: ModuleOp, names: set[str]) -> None:
    """Erase the functions among `names` that no call refers to any more."""
    called = {
        op.callee.root_reference.data for op in module.walk() if isinstance(op, func.CallOp)
    }
    for f in list(module.ops):
        if isinstance(f, func.FuncOp) and f.sym_name.data in names - called:
            f.detach()
            f.erase()


@dataclass(frozen=True)
class FoldConstantKernelsPass(ModulePass):
    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = _kernels(op)
        if not kernels:
            return
        pattern = FoldConstantCall(op, kernels)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
        # Only kernels whose calls went away: a te function nobody calls may be
        # what the user wrote.
        erase_uncalled(op, pattern.folded)



