"""The op folders of the graph dialect: what an op on known values computes.

A graph op whose operands are all known values (`graph.constant`, or `graph.weight`
read from the module's weight store) computes the same arrays on every run. Its
folder computes them once, at compile time. The folder of each op is that op's
meaning in the graph evaluator (`dialects.graph_reference.evaluate_op`, one numpy
formula per op kind), so folding and the numeric oracle cannot disagree.

Two drivers apply the folders:

- xDSL's `canonicalize`, through the `HasFolder` trait every graph op carries
  (`dialects/graph/traits.py`, `GraphFolder`, which calls `fold` below). A fold may not
  change the IR or the store, so it folds only results of at most
  `MAX_INLINE_ELEMENTS` elements; they come back as dense attributes that the
  dialect's `ConstantMaterializationInterface` turns into `graph.constant`s.
- `fold-constants` (`transforms/fold_constants.py`), which also folds large
  results into new weights of the store.

```mlir
%a = graph.constant dense<[1.0, -3.0]> : tensor<2xf32>
%r = graph.relu %a : (tensor<2xf32>) -> tensor<2xf32>
```
folds to
```mlir
%r = graph.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
```
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation

from tilecraft.dialects.graph_reference import EvaluationError, evaluate_op
from tilecraft.dialects import graph
from tilecraft.dialects.graph_values import MAX_INLINE_ELEMENTS, dense_attr, is_known, known_value, store_near
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.weights import WeightStore


def result_sizes(op: Operation) -> list[int] | None:
    """Elements of each result, or None while a result type is not a static tensor."""
    sizes = []
    for r in op.results:
        if not isinstance(r.type, TensorType) or any(d < 0 for d in r.type.get_shape()):
            return None
        sizes.append(math.prod(r.type.get_shape()))
    return sizes


def foldable(op: Operation) -> bool:
    """A graph compute op with operands, all of them constants or weights, and
    static result types to give the folded values."""
    return (
        isinstance(op, graph.GraphOp)
        and bool(op.operands)
        and all(is_known(v) for v in op.operands)
        and result_sizes(op) is not None
    )


def fold_arrays(op: graph.GraphOp, store: WeightStore | None, pass_name: str) -> list[np.ndarray] | None:
    """The arrays a foldable op computes; None if a weight cannot be read (no store)."""
    arrays = [known_value(v, store, pass_name) for v in op.operands]
    if any(a is None for a in arrays):
        return None
    try:
        return evaluate_op(op, arrays)
    except EvaluationError as e:
        raise OpError(op, f"{pass_name}: {e.message}") from None


def fold(op: Operation) -> Sequence[Attribute] | None:
    """The HasFolder hook: small results of an op on known values as dense
    attributes; None (not folded) otherwise."""
    if not foldable(op):
        return None
    sizes = result_sizes(op)
    assert sizes is not None
    if max(sizes, default=0) > MAX_INLINE_ELEMENTS:
        return None  # a fold creates no weights: fold-constants does that
    needs_store = any(isinstance(v.owner, graph.WeightOp) for v in op.operands)
    store = store_near(op, "canonicalize") if needs_store else None
    values = fold_arrays(op, store, "canonicalize")
    if values is None:
        return None
    return [dense_attr(v, r.type) for v, r in zip(values, op.results)]
