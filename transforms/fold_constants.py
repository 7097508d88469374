"""fold-constants: evaluate graph ops whose operands are all known values.

An op whose every operand is a `graph.constant` or a `graph.weight` computes the
same array on every run, so it is computed once, here, by the graph evaluator
(`backends.graph_reference.evaluate_op`), and replaced by its value:

- a result of at most `max-inline-elements` elements (default 16) becomes an
  inline `graph.constant`;
- a larger one becomes a new `graph.weight` whose array is added to the module's
  weight store (named after the first weight it came from, e.g.
  `fc.weight.transpose`); without a store the op stays.

Ops are visited in program order, so chains of foldable ops collapse into one
value. Reading weights needs the module's store; without one, only ops on inline
constants fold. A constant or weight left without users is erased.

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

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilecraft.backends.graph_reference import EvaluationError, constant_value, evaluate_op
from tilecraft.dialects import graph
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.weights import WeightError, WeightStore, pass_store


def constant_op(array: np.ndarray, t: TensorType) -> graph.ConstantOp:
    """A graph.constant holding `array` with type `t`."""
    values = array.reshape(-1)
    values = values.astype(np.int64) if values.dtype == np.bool_ else values
    return graph.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, values.tolist()))


def value_op(array: np.ndarray, t: TensorType, store: WeightStore | None, hint: str, max_inline: int = 16) -> Operation:
    """An op that produces `array`: an inline graph.constant when it is small or
    there is no store to hold it, else a new graph.weight named after `hint`."""
    if array.size <= max_inline or store is None:
        return constant_op(array, t)
    return graph.WeightOp(store.add(array.astype(array.dtype, copy=False), hint), t)


def known_value(value: SSAValue, store: WeightStore | None, pass_name: str = "fold-constants") -> np.ndarray | None:
    """The array `value` always holds, if it is a constant or a readable weight."""
    owner = value.owner
    if isinstance(owner, graph.ConstantOp):
        return constant_value(owner)
    if isinstance(owner, graph.WeightOp) and store is not None:
        try:
            return store[owner.weight_name.data]
        except WeightError as e:
            raise OpError(owner, f"{pass_name}: {e}") from None
    return None


def _name_hint(op: Operation) -> str:
    short = op.name.removeprefix("graph.")
    for v in op.operands:
        if isinstance(v.owner, graph.WeightOp):
            return f"{v.owner.weight_name.data}.{short}"
    return f"folded.{short}"


def fold_op(op: graph.GraphOp, store: WeightStore | None, max_inline: int) -> bool:
    """Replace `op` by the values it computes; False if it cannot be folded."""
    if not op.operands:
        return False
    arrays = [known_value(v, store) for v in op.operands]
    if any(a is None for a in arrays):
        return False
    if not all(isinstance(r.type, TensorType) for r in op.results):
        return False  # types not inferred yet: nothing to name the value's type by
    results = [r.type for r in op.results]
    sizes = [int(np.prod(t.get_shape())) for t in results]
    if store is None and max(sizes) > max_inline:
        return False  # a large value needs a store to live in
    try:
        values = evaluate_op(op, arrays)
    except EvaluationError as e:
        raise OpError(op, f"fold-constants: {e.message}") from None
    new_ops = [value_op(value, t, store, _name_hint(op), max_inline) for value, t in zip(values, results)]
    producers = [v.owner for v in op.operands]
    Rewriter.replace_op(op, new_ops, [o.results[0] for o in new_ops])
    for p in producers:
        if isinstance(p, Operation) and p.parent is not None and not any(r.uses for r in p.results):
            Rewriter.erase_op(p)
    return True


def fold_block(block: Block, store: WeightStore | None, max_inline: int = 16) -> int:
    """Fold every foldable graph op of `block`, in program order; returns how many."""
    folded = 0
    for op in list(block.ops):
        if op.parent is None:  # erased as a dead producer of an earlier fold
            continue
        if isinstance(op, graph.GraphOp) and fold_op(op, store, max_inline):
            folded += 1
    return folded


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Replace graph ops on constants and weights by the values they compute."""

    name = "fold-constants"

    max_inline_elements: int = 16
    """Results with at most this many elements become graph.constant, larger ones weights."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        store = pass_store(op, "fold-constants")
        for f in op.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                fold_block(f.body.block, store, self.max_inline_elements)
