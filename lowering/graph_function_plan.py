"""The decisions bufferize-graph-function makes about a whole graph function.

Before any op is rewritten, `plan_graph_function` reads the function as
convert-te-to-loop left it (kernel calls bridged through `bufferization.to_buffer`,
a `memref.alloc` per kernel result, `bufferization.to_tensor` back) and decides
what needs all of it: the new argument list (inputs, `{tc.weight}` memrefs, one
output memref per result), where each kernel result lives (written straight into
an output argument, a view of the arena at its `tc.offsets` byte offset, or a
buffer of its own), which results are copied out at the end, and whether the
memory plan is sound: two arena values alive at once (a kernel's operands and
results are, and the kernels take `noalias` arguments) must not share bytes. The
rewrite patterns of lowering/bufferize_graph_function.py read the plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import prod

from xdsl.dialects import arith, bufferization, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from tilecraft.dialects import graph, te
from tilecraft.dialects.graph.shapes import symbolic_dims
from tilecraft.transforms.concat_in_place import is_in_place, part_offsets
from tilecraft.utils.diagnostics import OpError

PASS = "bufferize-graph-function"

_ALLOWED = (
    graph.WeightOp,
    graph.ConstantOp,
    graph.ReshapeOp,
    graph.ConcatOp,  # in place only (concat-in-place): a view of the arena
    func.CallOp,
    bufferization.ToBufferOp,
    bufferization.ToTensorOp,
    memref.AllocOp,
    func.ReturnOp,
    # sizes known when it runs: read from the arguments, computed (lowering/sizes.py)
    memref.DimOp,
    arith.ConstantOp,
    arith.AddiOp,
    arith.MuliOp,
    arith.FloorDivSIOp,
    arith.RemSIOp,
)


def buffer_type(t: Attribute, where: Operation) -> MemRefType:
    """The buffer of a tensor; a scalar's has one element, as the kernels take it.
    A size known when the function runs (a `?` its type names) stays a `?`."""
    if not isinstance(t, TensorType) or sum(d < 0 for d in t.get_shape()) > len(symbolic_dims(t)):
        raise OpError(where, f"{PASS}: the graph function needs tensors of static or named sizes, not {t}")
    return MemRefType(t.element_type, t.get_shape() or [1])


def _with_dims(attrs: dict[str, Attribute], t: Attribute) -> dict[str, Attribute]:
    """`attrs` and, for a tensor with `?` sizes, their names (`tc.dims`)."""
    names = [str(d) for _, d in symbolic_dims(t)]
    if names:
        attrs["tc.dims"] = ArrayAttr([StringAttr(n) for n in names])
    return attrs


def _is_empty(t: Attribute) -> bool:
    """A tensor with a zero extent (fold-empty-tensors left it as a constant)."""
    return isinstance(t, TensorType) and 0 in t.get_shape()


def _string_attr(attrs: ArrayAttr | None, n: int, key: str) -> str | None:
    """The string `key` of the n-th entry of an arg_attrs/res_attrs array, if any."""
    if attrs is None or n >= len(attrs.data):
        return None
    a = attrs.data[n].data.get(key)
    return a.data if isinstance(a, StringAttr) else None


def _is_kernel_call(op: Operation) -> bool:
    """A call in the loop convention (memrefs in, nothing out), as convert-te-to-loop
    bridges a kernel call."""
    return (
        isinstance(op, func.CallOp)
        and not op.results
        and all(isinstance(a.type, MemRefType) for a in op.arguments)
    )


def is_graph_function(f: func.FuncOp) -> bool:
    """A tensor function that calls loop kernels, or that has nothing to compute (a
    model that returns an input or a weight). One with graph ops and no kernel
    calls (convert-graph-to-te has not run) is not one yet."""
    ftype = f.function_type
    if not any(isinstance(t, TensorType) for t in (*ftype.inputs.data, *ftype.outputs.data)):
        return False
    ops = list(f.body.walk())
    if any(isinstance(op, te.ComputeOp) for op in ops):
        return False
    if any(_is_kernel_call(op) for op in ops):
        return True
    trivial = (graph.WeightOp, graph.ConstantOp, graph.ReshapeOp, func.ReturnOp)
    return all(isinstance(op, trivial) for op in ops)


def _through_views(v: SSAValue) -> SSAValue:
    """`v` through the graph.reshape views in front of it."""
    while isinstance(v.owner, graph.ReshapeOp):
        v = v.owner.inputs[0]
    return v


# -- the function-level decisions --------------------------------------------------


@dataclass
class Placement:
    """Where a kernel result (a `memref.alloc` convert-te-to-loop bridged) lives."""

    call: func.CallOp
    index: int  # which result of the kernel
    output: int | None = None  # the output argument it is written into
    offset: int | None = None  # its byte offset in the arena


@dataclass
class GraphFunctionPlan:
    """The decisions about one graph function that need all of it: its new
    arguments, where every kernel result lives, the arena."""

    f: func.FuncOp
    weights: list[graph.WeightOp] = field(default_factory=list)
    arg_types: list[Attribute] = field(default_factory=list)
    arg_attrs: list[dict[str, Attribute]] = field(default_factory=list)
    arg_names: list[str] = field(default_factory=list)
    placements: dict[memref.AllocOp, Placement] = field(default_factory=dict)
    concats: dict[graph.ConcatOp, int] = field(default_factory=dict)  # in place: arena byte offset
    copies: list[int] = field(default_factory=list)  # results no kernel writes in place
    arena_bytes: int = 0
    arena: SSAValue | None = None  # set by `rewrite_signature`
    new_args: list[SSAValue] = field(default_factory=list)  # likewise

    def output_arg(self, n: int) -> SSAValue:
        return self.new_args[len(self.arg_types) - len(self.f.function_type.outputs.data) + n]


def plan_graph_function(f: func.FuncOp) -> GraphFunctionPlan:
    plan = GraphFunctionPlan(f)
    block = f.body.block
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp) or len(f.body.blocks) != 1:
        raise OpError(f, f"{PASS}: the graph function must be one block ending in func.return")
    for op in block.ops:
        if not isinstance(op, _ALLOWED) or (isinstance(op, func.CallOp) and not _is_kernel_call(op)):
            raise OpError(
                op,
                f"{PASS}: '{op.name}' is left in the graph function; every compute op "
                "must be in a kernel (run convert-graph-to-te, then convert-te-to-loop first)",
            )
        if isinstance(op, bufferization.ToBufferOp):
            _check_view(op.tensor, op.memref.type, op)
        if isinstance(op, graph.ConcatOp) and not is_in_place(op):
            raise OpError(op, f"{PASS}: a graph.concat in the graph function must be in place (concat-in-place)")
    plan.weights = [op for op in block.ops if isinstance(op, graph.WeightOp)]
    for n, arg in enumerate(block.args):
        plan.arg_types.append(buffer_type(arg.type, f))
        name = _string_attr(f.arg_attrs, n, "tc.name") or arg.name_hint or f"arg{n}"
        plan.arg_attrs.append(_with_dims({"tc.name": StringAttr(name)}, arg.type))
        plan.arg_names.append(arg.name_hint or name)
    for w in plan.weights:
        plan.arg_types.append(buffer_type(w.outputs[0].type, w))
        plan.arg_attrs.append({"tc.weight": w.weight_name})
        plan.arg_names.append(re.sub(r"[^A-Za-z0-9_]", "_", w.weight_name.data))
    for n, v in enumerate(ret.arguments):
        plan.arg_types.append(buffer_type(v.type, ret))
        name = _string_attr(f.res_attrs, n, "tc.name") or f"out{n}"
        plan.arg_attrs.append(_with_dims({"tc.name": StringAttr(name)}, v.type))
        plan.arg_names.append(name)

    for op in block.ops:
        if _is_kernel_call(op):
            _place_results(plan, op)
        elif isinstance(op, graph.ConcatOp):
            _place_concat(plan, op)
    # A kernel result returned once is written straight into its output argument;
    # anything else returned (an input, a weight, a constant, a value returned
    # twice) is copied there at the end, but for an empty one (nothing to copy).
    for n, v in enumerate(ret.arguments):
        _check_view(v, buffer_type(v.type, ret), ret)
        if _is_empty(v.type):
            continue  # an empty result: nothing to write
        alloc = _kernel_buffer(_through_views(v))
        placement = plan.placements.get(alloc) if alloc is not None else None
        if placement is not None and placement.output is None:
            placement.output, placement.offset = n, None
        else:
            plan.copies.append(n)
    if plan.concats or any(p.offset is not None for p in plan.placements.values()):
        size = f.attributes.get("tc.arena_bytes")
        if not isinstance(size, IntegerAttr) or size.value.data <= 0:
            first = next(p for p in plan.placements.values() if p.offset is not None)
            raise OpError(
                first.call,
                f"{PASS}: 'tc.offsets' places a value in the arena, but the function "
                "has no positive 'tc.arena_bytes' (run plan-memory)",
            )
        plan.arena_bytes = size.value.data
    check_arena(plan)
    return plan


def _check_view(v: SSAValue, target: Attribute, where: Operation) -> None:
    """A value seen through graph.reshape views must keep its buffer's type."""
    source = buffer_type(_through_views(v).type, where)
    if source != target:
        raise OpError(
            v.owner if isinstance(v.owner, graph.ReshapeOp) else where,
            f"{PASS}: a view of {source} as {target} is not the same buffer; only a "
            "scalar meeting a one-element tensor is",
        )


def _kernel_buffer(v: SSAValue) -> memref.AllocOp | None:
    """The bridged buffer a tensor was read back from, if it is a kernel result."""
    if isinstance(v.owner, bufferization.ToTensorOp) and isinstance(v.owner.memref.owner, memref.AllocOp):
        return v.owner.memref.owner
    return None


def _place_results(plan: GraphFunctionPlan, call: func.CallOp) -> None:
    """The output operands of a bridged call are its trailing `memref.alloc`s."""
    outs: list[memref.AllocOp] = []
    for a in reversed(call.arguments):
        if not isinstance(a.owner, memref.AllocOp):
            break
        outs.insert(0, a.owner)
    offsets: list[int] | None = None
    a = call.attributes.get("tc.offsets")
    if isinstance(a, DenseArrayBase):
        offsets = [int(v) for v in a.get_values()]
        if len(offsets) != len(outs):
            raise OpError(call, f"{PASS}: 'tc.offsets' needs one offset per result")
    for n, alloc in enumerate(outs):
        offset = offsets[n] if offsets is not None and offsets[n] >= 0 else None
        plan.placements[alloc] = Placement(call, n, offset=offset)


def _place_concat(plan: GraphFunctionPlan, concat: graph.ConcatOp) -> None:
    """An in-place concat is a view of the arena at its `tc.offsets`, and each of its
    operands must already be there: a kernel result (or another in-place concat)
    placed at the operand's offset in it."""
    a = concat.attributes.get("tc.offsets")
    offsets = [int(v) for v in a.get_values()] if isinstance(a, DenseArrayBase) else []
    if len(offsets) != 1 or offsets[0] < 0:
        raise OpError(concat, f"{PASS}: an in-place concat needs its arena byte offset in 'tc.offsets' (run plan-memory)")
    base = offsets[0]
    parts = part_offsets(concat)
    assert parts is not None, "plan-memory checked the parts"
    for v, at in zip(concat.inputs, parts):
        alloc = _kernel_buffer(v)
        placement = plan.placements.get(alloc) if alloc is not None else None
        where = placement.offset if placement is not None else plan.concats.get(v.owner)
        if where != base + at:
            raise OpError(
                concat,
                f"{PASS}: the in-place concat's operand {v.name_hint or '#' + str(parts.index(at))} is not "
                f"in its buffer (at arena byte {base + at})",
            )
    plan.concats[concat] = base


def _last_use(v: SSAValue, order: dict[Operation, int]) -> int:
    """Position of the last op of the function body that reads tensor `v` (through
    bridges and reshape views)."""
    last = -1
    for use in v.uses:
        op = use.operation
        if isinstance(op, bufferization.ToBufferOp):
            last = max([last, order[op]] + [order[u.operation] for u in op.memref.uses])
        elif isinstance(op, graph.ReshapeOp):
            last = max(last, order[op], _last_use(op.outputs[0], order))
        else:
            last = max(last, order[op])
    return last


def check_arena(plan: GraphFunctionPlan) -> None:
    """Two arena values alive at once (a kernel's operands and results are) must
    not share bytes: the kernels take `noalias` arguments."""
    order = {op: n for n, op in enumerate(plan.f.body.block.ops)}
    holders: dict[SSAValue, list[SSAValue]] = {}  # an in-place concat's parts: the concats holding them
    for concat in plan.concats:
        for v in concat.inputs:
            holders.setdefault(v, []).append(concat.outputs[0])
    spans = []
    for alloc, p in plan.placements.items():
        if p.offset is None:
            continue
        tensors = [u.operation for u in alloc.memref.uses if isinstance(u.operation, bufferization.ToTensorOp)]
        last = max([order[p.call]] + [_last_use(t.tensor, order) for t in tensors])
        size = _buffer_bytes(alloc.memref.type)
        mine = {t.tensor for t in tensors}
        spans.append((order[p.call], last, p.offset, size, p.call, mine, _held_by(mine, holders)))
    for concat, offset in plan.concats.items():
        size = _buffer_bytes(buffer_type(concat.outputs[0].type, concat))
        last = max(order[concat], _last_use(concat.outputs[0], order))
        spans.append((order[concat], last, offset, size, concat, {concat.outputs[0]}, _held_by({concat.outputs[0]}, holders)))
    for i, (f1, l1, o1, s1, c1, v1, h1) in enumerate(spans):
        for f2, l2, o2, s2, c2, v2, h2 in spans[i + 1 :]:
            if v1 & h2 or v2 & h1:  # one holds the other: an in-place concat and its part
                continue
            if f2 <= l1 and f1 <= l2 and o1 < o2 + s2 and o2 < o1 + s1:
                raise OpError(
                    c2,
                    f"{PASS}: 'tc.offsets' puts this result at bytes [{o2}, {o2 + s2}) of "
                    f"the arena, which a value still alive (from {_producer(c1)}) "
                    f"uses at [{o1}, {o1 + s1})",
                )


def _buffer_bytes(t: MemRefType) -> int:
    return prod(t.get_shape()) * max(1, t.element_type.bitwidth // 8)


def _held_by(values: set[SSAValue], holders: dict[SSAValue, list[SSAValue]]) -> set[SSAValue]:
    """`values` and every in-place concat that holds one of them (through nesting)."""
    found, stack = set(values), list(values)
    while stack:
        for h in holders.get(stack.pop(), ()):
            if h not in found:
                found.add(h)
                stack.append(h)
    return found


def _producer(op: Operation) -> str:
    return f"@{op.callee.root_reference.data}" if isinstance(op, func.CallOp) else "an in-place concat"
