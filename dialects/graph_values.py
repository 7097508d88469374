"""Known values of graph SSA values, and ops that make new ones.

The graph rewrites that compute with values (the canonicalization patterns of
`dialects/graph_canonicalization.py`, the folders of `dialects/graph_folders.py`,
fold-constants, alter-layout) read a `graph.constant`'s array from the IR and a
`graph.weight`'s from the weight store the module names. All of them reach the
store through `store_near(op, pass_name)`, which calls `utils.weights.pass_store`,
so how a store is handed to passes can change in one place.

A new array becomes an inline `graph.constant` when it is small (or there is no
store to hold it), else a `graph.weight` whose array goes into the store with
`store.add` (`value_op`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilecraft.dialects.graph_reference import constant_value
from tilecraft.dialects import graph
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.weights import WeightError, WeightStore, pass_store

MAX_INLINE_ELEMENTS = 16
"""Values of at most this many elements are inline graph.constants."""


def store_near(op: Operation, pass_name: str) -> WeightStore | None:
    """The weight store of the module that holds `op` (None if it names none);
    an unreadable store is an error at that module."""
    module: ModuleOp | None = None
    current: Operation | None = op
    while current is not None:
        if isinstance(current, ModuleOp):
            module = current
        current = current.parent_op()
    return None if module is None else pass_store(module, pass_name)


def dense_attr(array: np.ndarray, t: TensorType) -> DenseIntOrFPElementsAttr:
    """`array` as a dense attribute of type `t` (booleans as 0/1)."""
    values = array.reshape(-1)
    values = values.astype(np.int64) if values.dtype == np.bool_ else values
    return DenseIntOrFPElementsAttr.from_list(t, values.tolist())


def constant_op(array: np.ndarray, t: TensorType) -> graph.ConstantOp:
    """A graph.constant holding `array` with type `t`."""
    return graph.ConstantOp(dense_attr(array, t))


def value_op(
    array: np.ndarray, t: TensorType, store: WeightStore | None, hint: str, max_inline: int = MAX_INLINE_ELEMENTS
) -> Operation:
    """An op that produces `array`: an inline graph.constant when it is small or
    there is no store to hold it, else a new graph.weight named after `hint`."""
    if array.size <= max_inline or store is None:
        return constant_op(array, t)
    return graph.WeightOp(store.add(array.astype(array.dtype, copy=False), hint), t)


def is_known(value: SSAValue) -> bool:
    """Whether `value` is a graph.constant or graph.weight result (no store read)."""
    return isinstance(value.owner, (graph.ConstantOp, graph.WeightOp))


def known_value(value: SSAValue, store: WeightStore | None, pass_name: str) -> np.ndarray | None:
    """The array `value` always holds, if it is a constant or a weight of `store`;
    a weight the store lacks is an error at the graph.weight."""
    owner = value.owner
    if isinstance(owner, graph.ConstantOp):
        return constant_value(owner)
    if isinstance(owner, graph.WeightOp) and store is not None:
        try:
            return store[owner.weight_name.data]
        except WeightError as e:
            raise OpError(owner, f"{pass_name}: {e}") from None
    return None


def erase_if_dead(values: list[SSAValue], rewriter: PatternRewriter) -> None:
    """Erase the constants and weights among `values` that nothing uses any more."""
    for v in values:
        owner = v.owner
        if isinstance(owner, (graph.ConstantOp, graph.WeightOp)) and owner.parent and not v.uses:
            rewriter.erase(owner)
