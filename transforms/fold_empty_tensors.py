"""fold-empty-tensors: compute nothing for tensors that hold nothing.

A tensor with a zero extent (`tensor<2x0x4xf32>`) holds no elements, so its value
is known before the model runs, whatever its inputs. This pass uses that, so the
kernels downstream never see an empty tensor (the te and loop levels have no
zero-extent loops or buffers):

- `EmptyResultToConstant`: every value with a zero extent (an op's result, or an
  argument of a graph function) is replaced by an empty `graph.constant`; the op
  left without users goes. A `graph.split` with some empty pieces splits into the
  others only (`SplitWithoutEmptyPieces`).
- `FoldReadOfEmpty`: an op that reads an empty tensor and gives a non-empty one
  becomes what it computes: a reduction over an empty axis is filled with the
  reduction's value on the empty set (sum 0, prod 1, max -inf or the type's
  lowest value, min +inf or its highest, mean NaN, as numpy with `initial` and
  ONNX define them); a concat drops its empty operands; a matmul or a dense whose
  K is 0 gives zeros (a dense: its bias, broadcast); a scatter of no updates is
  its data; a pad of an empty tensor is its padding value everywhere; anything else whose operands are all known (empty
  or constant) is folded by the graph evaluator (`dialects/graph_folders.py`).

Ops on empty tensors this cannot fold (a convolution over zero channels, say) stay
for `check-graph-level`, which compile-model runs next, to report at the op. The
function keeps its signature: an empty argument is still passed (and never read),
an empty result is returned as an empty array.

```mlir
func.func @main(%x: tensor<2x0x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x0x4xf32>) {
  %s = graph.reduce_sum %x <{axes = array<i64: 1>}> : (tensor<2x0x4xf32>) -> tensor<2x1x4xf32>
  %e = graph.exp %x : (tensor<2x0x4xf32>) -> tensor<2x0x4xf32>
  func.return %s, %e : tensor<2x1x4xf32>, tensor<2x0x4xf32>
}
```
becomes
```mlir
func.func @main(%x: tensor<2x0x4xf32>) -> (tensor<2x1x4xf32>, tensor<2x0x4xf32>) {
  %0 = graph.constant dense<> : tensor<2x0x4xf32>
  %s = graph.constant dense<0.000000e+00> : tensor<2x1x4xf32>
  func.return %s, %0 : tensor<2x1x4xf32>, tensor<2x0x4xf32>
}
```
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from tilecraft.dialects import graph
from tilecraft.dialects.graph_folders import fold_arrays
from tilecraft.dialects.graph_reference import empty_set_value
from tilecraft.dialects.graph_values import is_known, store_near, value_op
from tilecraft.utils.dtypes import numpy_dtype
from tilecraft.utils.levels import function_level

NAME = "fold-empty-tensors"


# -- helpers ----------------------------------------------------------------------------


def is_empty(value: SSAValue) -> bool:
    """Whether `value` is a tensor with a zero extent (it holds no elements)."""
    t = value.type
    return isinstance(t, TensorType) and 0 in t.get_shape()


def empty_constant(t: TensorType) -> graph.ConstantOp:
    """`graph.constant dense<> : t`, the one value of an empty tensor type."""
    return graph.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, []))


def splat_constant(t: TensorType, value: float) -> graph.ConstantOp:
    """`graph.constant dense<value> : t` (one value, any size)."""
    element = t.get_element_type()
    if isinstance(element, IntegerType):
        return graph.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [int(value)]))
    return graph.ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [float(value)]))


# -- patterns ---------------------------------------------------------------------------


class EmptyResultToConstant(RewritePattern):
    """An empty result becomes an empty constant; the op goes once nothing reads it.

    ```mlir
    %e = graph.exp %x : (tensor<2x0xf32>) -> tensor<2x0xf32>
    ```
    becomes `%e = graph.constant dense<> : tensor<2x0xf32>`.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, (graph.GraphOp, graph.WeightOp)):
            return
        if isinstance(op, graph.SplitOp) and not is_empty(op.inputs[0]):
            return  # some pieces are not empty: SplitWithoutEmptyPieces
        changed = False
        for r in op.results:
            if is_empty(r) and r.uses:
                assert isinstance(r.type, TensorType)
                constant = empty_constant(r.type)
                rewriter.insert(constant, InsertPoint.before(op))
                constant.results[0].name_hint = r.name_hint
                rewriter.replace_all_uses_with(r, constant.results[0])
                changed = True
        if all(not r.uses for r in op.results) and (changed or any(is_empty(r) for r in op.results)):
            rewriter.erase(op)


class SplitWithoutEmptyPieces(RewritePattern):
    """A split with empty pieces: those are empty constants, the rest a split of the
    non-empty sizes (or the input itself when one piece is all of it).

    ```mlir
    %a, %b, %c = graph.split %x {sizes = array<i64: 2, 0, 3>} : ...
    ```
    becomes an empty constant for `%b` and `%a, %c = graph.split %x {sizes = array<i64: 2, 3>}`.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.SplitOp, rewriter: PatternRewriter) -> None:
        if is_empty(op.inputs[0]) or not any(is_empty(r) for r in op.results):
            return  # an empty input: every piece is empty (EmptyResultToConstant)
        kept = [r for r in op.results if not is_empty(r)]
        new_ops: list[Operation] = []
        values: list[SSAValue] = []
        split = None
        if len(kept) > 1:
            split = op.with_properties(op.inputs, sizes=tuple(s for s in op.sizes if s != 0))
            new_ops.append(split)
        pieces = iter(split.results if split is not None else [op.inputs[0]])
        for r in op.results:
            if is_empty(r):
                assert isinstance(r.type, TensorType)
                constant = empty_constant(r.type)
                new_ops.append(constant)
                values.append(constant.results[0])
            else:
                values.append(next(pieces))
        rewriter.replace(op, new_ops, values)


class FoldReadOfEmpty(RewritePattern):
    """An op that reads an empty tensor and gives a non-empty one: what it computes.

    ```mlir
    %m = graph.reduce_max %x <{axes = array<i64: 1>}> : (tensor<2x0xf32>) -> tensor<2x1xf32>
    ```
    becomes `%m = graph.constant dense<0xFF800000> : tensor<2x1xf32>` (-inf).
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, graph.GraphOp) or not any(is_empty(v) for v in op.operands):
            return
        if len(op.results) != 1 or is_empty(op.results[0]):
            return  # empty results: EmptyResultToConstant
        t = op.results[0].type
        if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
            return
        if isinstance(op, (graph.ReduceSumOp, graph.ReduceProdOp, graph.ReduceMaxOp,
                           graph.ReduceMinOp, graph.ReduceMeanOp)):  # fmt: skip
            value = empty_set_value(op, numpy_dtype(t))
            if value is not None:
                constant = splat_constant(t, value)
                rewriter.replace(op, constant)
            return
        if isinstance(op, graph.ConcatOp):
            kept = [v for v in op.inputs if not is_empty(v)]
            if len(kept) == 1:
                rewriter.replace(op, [], [kept[0]])
            else:
                rewriter.replace(op, op.with_properties(kept))
            return
        if isinstance(op, (graph.MatmulOp, graph.DenseOp)) and is_empty(op.inputs[1]):  # rhs or weight
            # K is 0: every output element is an empty sum
            if isinstance(op, graph.DenseOp) and op.bias is not None:
                bias = graph.BroadcastToOp([op.bias], {"shape": tuple(t.get_shape())})
                rewriter.replace(op, bias)
            else:
                constant = splat_constant(t, 0)
                rewriter.replace(op, constant)
            return
        if isinstance(op, (graph.ScatterElementsOp, graph.ScatterNDOp)) and is_empty(op.updates):
            rewriter.replace(op, [], [op.input])  # no updates: the data as it is
            return
        if isinstance(op, graph.PadOp) and is_empty(op.inputs[0]):
            constant = splat_constant(t, op.value)
            rewriter.replace(op, constant)
            return
        if all(is_known(v) for v in op.operands):
            store = store_near(op, NAME)
            values = fold_arrays(op, store, NAME)
            if values is None:
                return  # a weight, and no store to read it from
            new = value_op(np.asarray(values[0]), t, store, f"folded.{op.name.removeprefix('graph.')}")
            rewriter.replace(op, new)


def fold_empty_tensors_patterns() -> list[RewritePattern]:
    return [SplitWithoutEmptyPieces(), EmptyResultToConstant(), FoldReadOfEmpty()]


def _empty_arguments_to_constants(f: func.FuncOp) -> None:
    """An empty argument is passed but never read: its readers read a constant."""
    block = f.body.block
    first = block.first_op
    assert first is not None, "a function body ends in func.return"
    for arg in block.args:
        if is_empty(arg) and arg.uses:
            assert isinstance(arg.type, TensorType)
            constant = empty_constant(arg.type)
            block.insert_op_before(constant, first)  # in argument order
            constant.results[0].name_hint = arg.name_hint
            arg.replace_all_uses_with(constant.results[0])


@dataclass(frozen=True)
class FoldEmptyTensorsPass(ModulePass):
    """Replace every empty tensor by a constant and fold what reads one."""

    name = "fold-empty-tensors"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        for f in functions:
            if function_level(f)[0] == "graph":
                _empty_arguments_to_constants(f)
        walker = PatternRewriteWalker(GreedyRewritePatternApplier(fold_empty_tensors_patterns()))
        for f in functions:
            if function_level(f)[0] == "graph":
                walker.rewrite_region(f.body)
