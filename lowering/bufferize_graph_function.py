"""bufferize-graph-function: the function that calls the kernels, at the loop level.

convert-graph-to-te leaves a straight line of `func.call`s over the graph's
inputs, `graph.weight`s and `graph.constant`s; convert-te-to-loop turns the
kernels into loop functions (inputs, then one output memref per result) and
bridges each call (`bufferization.to_buffer` of its operands, a `memref.alloc` per
result, `bufferization.to_tensor` of it). This pass gives that caller the same
memref convention, so the whole model is one loop-level module that
convert-loop-to-llvm compiles:

- arguments: the graph inputs (memrefs, their `tc.name`s kept), then one memref
  per weight (`{tc.weight = "<name>"}`: bound from the weight store by whoever
  runs it), then one output memref per result (`tc.name` from `res_attrs`);
- a kernel result the function returns is written into that output argument
  (anything else returned, such as an input or a weight, is copied there at the
  end); a result with a `tc.offsets` byte offset (plan-memory) is a `loop.view` of
  one `loop.alloc "arena"` of `tc.arena_bytes`; any other result gets a `loop.alloc`;
- a `graph.constant` becomes a buffer filled by stores (a splat by one loop); an
  empty one (fold-empty-tensors leaves them as results) needs no buffer: its
  output argument is left as it is (it has no elements);
- a `graph.reshape` (a scalar meeting a kernel's one-element tensor) is a view:
  the same buffer (scalars are one-element buffers here).

The decisions that need the whole function are made first
(`lowering/graph_function_plan.py`: the argument list, where each kernel result
lives, the arena and the check that two arena values alive at once do not
overlap); the function-level rewrites follow (the arguments, the arena), then
patterns that read the plan, one op at a time; the bridges left unused, and
anything else nothing reads, go as the walk goes.

```mlir
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w = graph.weight "fc.weight" : tensor<8x16xf32>
  %xb = bufferization.to_buffer %x : tensor<4x16xf32> to memref<4x16xf32>
  %wb = bufferization.to_buffer %w : tensor<8x16xf32> to memref<8x16xf32>
  %yb = memref.alloc() : memref<4x8xf32>
  func.call @fused_dense_relu(%xb, %wb, %yb) : (...) -> ()
  %y = bufferization.to_tensor %yb : memref<4x8xf32> to tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
```
becomes
```mlir
func.func @main(%x: memref<4x16xf32>, %w: memref<8x16xf32> {tc.weight = "fc.weight"},
                %out0: memref<4x8xf32> {tc.name = "out0"}) {
  func.call @fused_dense_relu(%x, %w, %out0) : (...) -> ()
  func.return
}
```
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, bufferization, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
    i8,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from tilecraft.dialects import graph, loop
from tilecraft.lowering.graph_function_plan import (
    PASS,
    GraphFunctionPlan,
    buffer_type,
    is_graph_function,
    plan_graph_function,
)
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.names import name_hint

# A non-splat graph.constant is written element by element; larger ones belong
# in the weight store.
MAX_INLINE_ELEMENTS = 4096


# -- the function-level rewrites ------------------------------------------------------


def rewrite_signature(plan: GraphFunctionPlan) -> None:
    """The new arguments (after the tensor ones, which `finish` removes), seen as
    tensors through bridges until the patterns fold them; the arena."""
    f = plan.f
    block = f.body.block
    first = block.first_op
    assert first is not None
    n_old = len(block.args)
    for t, name in zip(plan.arg_types, plan.arg_names):
        arg = block.insert_arg(t, len(block.args))
        arg.name_hint = name_hint(name)
        plan.new_args.append(arg)
    for old, new in zip(list(block.args[:n_old]), plan.new_args):
        bridge = bufferization.ToTensorOp(new)
        block.insert_op_before(bridge, first)
        old.replace_all_uses_with(bridge.tensor)
    for w, arg in zip(plan.weights, plan.new_args[n_old:]):
        bridge = bufferization.ToTensorOp(arg)
        block.insert_op_before(bridge, w)
        w.outputs[0].replace_all_uses_with(bridge.tensor)
        w.detach()
        w.erase()
    if plan.arena_bytes:
        views = [a for a, p in plan.placements.items() if p.offset is not None and p.output is None]
        first_view = views[0] if views else next(iter(plan.concats))
        arena = loop.AllocOp("arena", "global", MemRefType(i8, [plan.arena_bytes]))
        arena.buffer.name_hint = "arena"
        block.insert_op_before(arena, first_view)
        plan.arena = arena.buffer


def finish(plan: GraphFunctionPlan, n_old: int) -> None:
    f = plan.f
    block = f.body.block
    for arg in list(block.args[:n_old]):
        block.erase_arg(arg)
    for p in plan.placements.values():  # the memory plan is carried out: views
        p.call.attributes.pop("tc.offsets", None)
    f.function_type = FunctionType.from_lists(plan.arg_types, [])
    f.arg_attrs = ArrayAttr([DictionaryAttr(a) for a in plan.arg_attrs])
    f.res_attrs = None


# -- loops the patterns emit ----------------------------------------------------------


def _loop_nest(shape: list[int], body) -> Operation:
    """Serial loops over `shape` around the ops `body(indices)` returns."""
    assert shape, "buffers here have at least one axis (a scalar's has one element)"
    loops = [loop.ForOp(0, n, "serial") for n in shape]
    for outer, inner in zip(loops, loops[1:]):
        outer.body.block.insert_op_before(inner, outer.body.block.last_op)
    ops = body([lp.var for lp in loops])
    innermost = loops[-1].body.block
    for op in ops:
        innermost.insert_op_before(op, innermost.last_op)
    return loops[0]


def _scalar(v, element: Attribute) -> arith.ConstantOp:
    if isinstance(element, IntegerType):
        return arith.ConstantOp(IntegerAttr(int(v), element))
    return arith.ConstantOp(FloatAttr(float(v), element))


def _copy(source: SSAValue, target: SSAValue) -> Operation:
    """Loops copying `source` into `target` (the same memref type)."""
    shape = list(target.type.get_shape())  # type: ignore[attr-defined]

    def body(idx):
        load = memref.LoadOp.get(source, idx)
        return [load, memref.StoreOp.get(load.res, target, idx)]

    return _loop_nest(shape, body)


# -- patterns ----------------------------------------------------------------------------


@dataclass
class PlaceKernelResult(RewritePattern):
    """A kernel result's buffer where the plan put it.

    ```mlir
    %a = memref.alloc() : memref<4xf32>          // tc.offsets = [16] on its call
    ```
    becomes `%a = loop.view %arena[16] : memref<32xi8> to memref<4xf32>` (or the
    output argument it is returned in, or `loop.alloc "<kernel>_<n>" global`).
    """

    plans: dict[func.FuncOp, GraphFunctionPlan]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocOp, rewriter: PatternRewriter) -> None:
        plan = self.plans.get(op.parent_op())
        placement = plan.placements.get(op) if plan is not None else None
        if placement is None:
            return
        t = op.memref.type
        if placement.output is not None:
            rewriter.replace(op, [], [plan.output_arg(placement.output)])
            return
        if placement.offset is not None:
            assert plan.arena is not None
            new: Operation = loop.ViewOp(plan.arena, placement.offset, t)
        else:
            name = f"{placement.call.callee.root_reference.data}_{placement.index}"
            new = loop.AllocOp(name, "global", t, list(op.dynamic_sizes))  # type: ignore[arg-type]
        hint = op.memref.name_hint
        rewriter.replace(op, new)
        new.results[0].name_hint = hint


@dataclass
class PlaceInPlaceConcat(RewritePattern):
    """An in-place concat is the view of the arena its operands were written into:

    ```mlir
    %c = graph.concat %a, %b {axis = 1 : i64, tc.in_place, tc.offsets = array<i64: 0>} : (...) -> tensor<1x8x4x4x16xf32>
    ```
    becomes `%c.buf = loop.view %arena[0] : memref<2048xi8> to memref<1x8x4x4x16xf32>`
    (read back as a tensor until the bridges fold).
    """

    plans: dict[func.FuncOp, GraphFunctionPlan]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConcatOp, rewriter: PatternRewriter) -> None:
        plan = self.plans.get(op.parent_op())
        if plan is None or op not in plan.concats:
            return
        assert plan.arena is not None
        view = loop.ViewOp(plan.arena, plan.concats[op], buffer_type(op.outputs[0].type, op))
        view.results[0].name_hint = op.outputs[0].name_hint
        rewriter.replace(op, [view, bufferization.ToTensorOp(view.results[0])])


class FoldBufferBridge(RewritePattern):
    """`to_buffer(to_tensor(%m))` is `%m`; through a reshape view, the same buffer:

    ```mlir
    %t = bufferization.to_tensor %m : memref<1xf32> to tensor<f32>
    %r = graph.reshape %t {shape = [1]} : (tensor<f32>) -> tensor<1xf32>
    %b = bufferization.to_buffer %r : tensor<1xf32> to memref<1xf32>
    ```
    gives `%m` for `%b`.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: bufferization.ToBufferOp, rewriter: PatternRewriter) -> None:
        source = op.tensor
        while isinstance(source.owner, graph.ReshapeOp):
            source = source.owner.inputs[0]
        if not isinstance(source.owner, bufferization.ToTensorOp):
            return
        buffer = source.owner.memref
        assert buffer.type == op.memref.type, "the plan checked the views"
        rewriter.replace(op, [], [buffer])


class BufferizeConstant(RewritePattern):
    """A graph.constant read by a kernel becomes a buffer written in place.

    ```mlir
    %k = graph.constant dense<0.5> : tensor<4xf32>
    ```
    becomes
    ```mlir
    %k.buf = loop.alloc "constant" global : memref<4xf32>
    %h = arith.constant 5.000000e-01 : f32
    loop.for %i = 0 to 4 { memref.store %h, %k.buf[%i] : memref<4xf32> }
    %k = bufferization.to_tensor %k.buf : memref<4xf32> to tensor<4xf32>
    ```
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: graph.ConstantOp, rewriter: PatternRewriter) -> None:
        t = op.outputs[0].type
        mtype = buffer_type(t, op)
        if 0 in mtype.get_shape():
            # An empty constant is only returned, and nothing is written for it:
            # it goes once BufferizeReturn no longer reads it.
            if not op.outputs[0].uses:
                rewriter.erase(op)
            return
        alloc = loop.AllocOp("constant", "global", mtype)
        alloc.buffer.name_hint = op.outputs[0].name_hint
        ops: list[Operation] = [alloc]
        values = op.value.get_values()
        shape = list(mtype.get_shape())
        count = prod(shape)
        element = mtype.element_type
        flat = np.asarray(values)
        if (flat == flat[0]).all() or np.isnan(flat).all():  # a splat (NaN is not == NaN)
            value = _scalar(values[0] if values else 0, element)
            fill = _loop_nest(shape, lambda idx: [memref.StoreOp.get(value.result, alloc.buffer, idx)])
            ops += [value, fill]
        elif count > MAX_INLINE_ELEMENTS:
            raise OpError(
                op,
                f"{PASS}: a graph.constant of {count} distinct elements is too large to "
                f"write inline (at most {MAX_INLINE_ELEMENTS}); make it a graph.weight",
            )
        else:
            for flat, v in enumerate(values):
                idx = [arith.ConstantOp(IntegerAttr(int(i), IndexType())) for i in np.unravel_index(flat, shape)]
                value = _scalar(v, element)
                ops += [*idx, value, memref.StoreOp.get(value, alloc.buffer, idx)]
        # (A scalar's bridge reads back a one-element tensor: its readers are
        # reshape views and bridges, which fold away.)
        bridge = bufferization.ToTensorOp(alloc.buffer)
        rewriter.replace(op, [*ops, bridge])


@dataclass
class BufferizeReturn(RewritePattern):
    """The results are in the output arguments: what no kernel wrote there is
    copied (`loop.for` of loads and stores), and the function returns nothing."""

    plans: dict[func.FuncOp, GraphFunctionPlan]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter) -> None:
        plan = self.plans.get(op.parent_op())
        if plan is None or not op.arguments:
            return
        for n in plan.copies:
            v, target = op.arguments[n], plan.output_arg(n)
            source = bufferization.ToBufferOp(operands=[v], result_types=[target.type])
            rewriter.insert(source, InsertPoint.before(op))
            rewriter.insert(_copy(source.memref, target), InsertPoint.before(op))
        rewriter.replace(op, func.ReturnOp())


class EraseUnusedBridge(RewritePattern):
    """A `bufferization.to_tensor` nothing reads any more."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: bufferization.ToTensorOp, rewriter: PatternRewriter) -> None:
        if not op.tensor.uses:
            rewriter.erase(op)


def bufferize_graph_function_patterns(plans: dict[func.FuncOp, GraphFunctionPlan]) -> list[RewritePattern]:
    return [
        PlaceKernelResult(plans),
        PlaceInPlaceConcat(plans),
        FoldBufferBridge(),
        BufferizeConstant(),
        BufferizeReturn(plans),
        EraseUnusedBridge(),
    ]


@dataclass(frozen=True)
class BufferizeGraphFunctionPass(ModulePass):
    """Rewrite every function that calls loop kernels (after convert-te-to-loop) to
    their memref calling convention."""

    name = "bufferize-graph-function"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [f for f in op.body.block.ops if isinstance(f, func.FuncOp) and is_graph_function(f)]
        if not functions:
            return
        plans = {f: plan_graph_function(f) for f in functions}
        n_old = {f: len(f.body.block.args) for f in functions}
        for plan in plans.values():
            rewrite_signature(plan)
        # Only the graph functions are walked: the kernels are left as they are.
        patterns = GreedyRewritePatternApplier(bufferize_graph_function_patterns(plans))
        for f in functions:
            PatternRewriteWalker(patterns).rewrite_region(f.body)
        for f, plan in plans.items():
            leftover = next((o for o in f.body.walk() if _has_tensor(o)), None)
            if leftover is not None:
                raise OpError(leftover, f"{PASS}: '{leftover.name}' still works on tensors")
            finish(plan, n_old[f])


def _has_tensor(op: Operation) -> bool:
    return any(isinstance(v.type, TensorType) for v in (*op.operands, *op.results))
