"""The graph function at the loop level: what `convert-te-to-loop` makes of the
function that calls the kernels, once the kernels take memrefs.

convert-graph-to-te leaves a straight line of `func.call`s on tensors over the
graph's inputs, `graph.weight`s and `graph.constant`s. Its kernels become loop
functions that take their inputs, then one output memref per result, and return
nothing; this module rewrites the caller to the same convention, so the whole
model is one loop-level module that `convert-loop-to-llvm` compiles:

- arguments: the graph inputs (memrefs, their `tc.name`s kept), then one memref
  per weight (`{tc.weight = "<name>"}`: bound from the weight store by whoever
  runs it), then one output memref per result (`tc.name` from `res_attrs`);
- a call's result that the function returns is written into the output argument
  (anything else returned, such as an input or a weight, is copied there at the
  end); a value with a `tc.offsets` byte offset (plan-memory) is a `loop.view` of one
  `loop.alloc "arena"` of `tc.arena_bytes`; any other value gets a `loop.alloc`;
- a `graph.constant` becomes a buffer filled by stores (a splat by one loop);
- a `graph.reshape` (a scalar meeting a kernel's one-element tensor) is a view:
  the same buffer (scalars are one-element buffers here).

```mlir
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w = graph.weight "fc.weight" : tensor<8x16xf32>
  %y = func.call @fused_dense_relu(%x, %w) : (...) -> tensor<4x8xf32>
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

import re
from math import prod

import numpy as np
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
    i8,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from tilecraft.dialects import graph, loop
from tilecraft.utils.diagnostics import OpError

PASS = "convert-te-to-loop"
# A non-splat graph.constant is written element by element; larger ones belong
# in the weight store.
MAX_INLINE_ELEMENTS = 4096


def is_graph_function(f: func.FuncOp, kernels: set[str]) -> bool:
    """Whether `f` calls any of the te functions named `kernels`, or is a tensor
    function with nothing to compute (a model that returns an input or a weight)."""
    ops = list(f.body.walk())
    if any(isinstance(op, func.CallOp) and op.callee.root_reference.data in kernels for op in ops):
        return True
    ftype = f.function_type
    tensors = any(isinstance(t, TensorType) for t in (*ftype.inputs.data, *ftype.outputs.data))
    return tensors and all(isinstance(op, (graph.WeightOp, graph.ConstantOp, graph.ReshapeOp, func.ReturnOp)) for op in ops)


def bufferize(f: func.FuncOp, lowered: dict[str, func.FuncOp]) -> func.FuncOp:
    """The loop-level form of graph function `f` whose callees are now `lowered`."""
    return _Bufferizer(f, lowered).run()


def _memref(t: Attribute, where: Operation) -> MemRefType:
    """The buffer of a tensor; a scalar's has one element, as the kernels take it."""
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        raise OpError(where, f"{PASS}: the graph function needs statically shaped tensors, not {t}")
    return MemRefType(t.element_type, t.get_shape() or [1])


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


def _string_attr(attrs: ArrayAttr | None, n: int, key: str) -> str | None:
    """The string `key` of the n-th entry of an arg_attrs/res_attrs array, if any."""
    if attrs is None or n >= len(attrs.data):
        return None
    a = attrs.data[n].data.get(key)
    return a.data if isinstance(a, StringAttr) else None


class _Bufferizer:
    def __init__(self, f: func.FuncOp, lowered: dict[str, func.FuncOp]):
        self.f = f
        self.lowered = lowered
        self.buffers: dict[SSAValue, SSAValue] = {}
        self.ops: list[Operation] = []
        self.arena: SSAValue | None = None
        self._views: list[tuple[loop.ViewOp, func.CallOp, int]] = []

    def run(self) -> func.FuncOp:
        f = self.f
        block = f.body.block
        ret = block.last_op
        if not isinstance(ret, func.ReturnOp) or len(f.body.blocks) != 1:
            raise OpError(f, f"{PASS}: the graph function must be one block ending in func.return")
        weights = [op for op in block.ops if isinstance(op, graph.WeightOp)]
        outputs = list(ret.arguments)

        types: list[Attribute] = []
        attrs: list[dict[str, Attribute]] = []
        for n, arg in enumerate(block.args):
            types.append(_memref(arg.type, f))
            name = _string_attr(f.arg_attrs, n, "tc.name") or arg.name_hint or f"arg{n}"
            attrs.append({"tc.name": StringAttr(name)})
        for w in weights:
            types.append(_memref(w.outputs[0].type, w))
            attrs.append({"tc.weight": w.weight_name})
        for n, v in enumerate(outputs):
            types.append(_memref(v.type, ret))
            attrs.append({"tc.name": StringAttr(_string_attr(f.res_attrs, n, "tc.name") or f"out{n}")})

        new_block = Block(arg_types=types)
        inputs = new_block.args[: len(block.args)]
        for old, new in zip(block.args, inputs):
            new.name_hint = old.name_hint
            self.buffers[old] = new
        for w, new in zip(weights, new_block.args[len(block.args) :]):
            self.buffers[w.outputs[0]] = new
            new.name_hint = re.sub(r"[^A-Za-z0-9_]", "_", w.weight_name.data)
        for a, new in zip(attrs[len(block.args) + len(weights) :], new_block.args[len(block.args) + len(weights) :]):
            new.name_hint = a["tc.name"].data
        outputs = [self.root(v) for v in outputs]
        # A kernel result returned once is written straight into its output
        # argument; anything else returned (an input, a weight, a constant, a value
        # returned twice) is copied there at the end.
        self.out_args = {}
        copies: list[tuple[SSAValue, SSAValue]] = []
        for v, arg in zip(outputs, new_block.args[len(block.args) + len(weights) :]):
            if isinstance(v.owner, func.CallOp) and v not in self.out_args:
                self.out_args[v] = arg
            else:
                copies.append((v, arg))

        for op in block.ops:
            if isinstance(op, graph.WeightOp) or op is ret:
                continue
            if isinstance(op, graph.ReshapeOp):
                # A scalar as a kernel's one-element tensor: the same buffer.
                self.buffers[op.outputs[0]] = self.buffers[op.inputs[0]]
            elif isinstance(op, graph.ConstantOp):
                if op.outputs[0].uses:
                    self.constant(op)
            elif isinstance(op, func.CallOp):
                self.call(op)
            else:
                raise OpError(
                    op,
                    f"{PASS}: '{op.name}' is left in the graph function; every compute op "
                    "must be in a kernel (run convert-graph-to-te first)",
                )
        self.check_arena()
        for v, arg in copies:
            self.ops.append(self.copy(self.buffers[v], arg))
        new_block.add_ops(self.ops)
        new_block.add_op(func.ReturnOp())
        lowered = func.FuncOp(
            f.sym_name.data,
            (types, []),
            Region(new_block),
            arg_attrs=ArrayAttr([DictionaryAttr(a) for a in attrs]),
        )
        for key in ("tc.arena_bytes", "tc.naive_bytes"):
            if key in f.attributes:
                lowered.attributes[key] = f.attributes[key]
        return lowered

    def root(self, v: SSAValue) -> SSAValue:
        """`v` through the graph.reshape views in front of it."""
        while isinstance(v.owner, graph.ReshapeOp):
            v = v.owner.inputs[0]
        return v

    # -- buffers ------------------------------------------------------------------

    def result_buffer(self, call: func.CallOp, n: int, offsets: list[int] | None) -> SSAValue:
        result = call.results[n]
        mtype = _memref(result.type, call)
        if result in self.out_args:
            return self.out_args[result]
        if offsets is not None and offsets[n] >= 0:
            arena = self.arena_buffer(call)
            view = loop.ViewOp(arena, offsets[n], mtype)
            self._views.append((view, call, n))
            self.ops.append(view)
            return view.result
        alloc = loop.AllocOp(f"{call.callee.root_reference.data}_{n}", "global", mtype)
        self.ops.append(alloc)
        return alloc.buffer

    def arena_buffer(self, where: Operation) -> SSAValue:
        if self.arena is None:
            size = self.f.attributes.get("tc.arena_bytes")
            if not isinstance(size, IntegerAttr) or size.value.data <= 0:
                raise OpError(
                    where,
                    f"{PASS}: 'tc.offsets' places a value in the arena, but the function "
                    "has no positive 'tc.arena_bytes' (run plan-memory)",
                )
            alloc = loop.AllocOp("arena", "global", MemRefType(i8, [size.value.data]))
            alloc.buffer.name_hint = "arena"
            self.ops.append(alloc)
            self.arena = alloc.buffer
        return self.arena

    def call(self, op: func.CallOp) -> None:
        name = op.callee.root_reference.data
        callee = self.lowered.get(name)
        if callee is None:
            raise OpError(op, f"{PASS}: @{name} is not a kernel of this module")
        offsets = None
        a = op.attributes.get("tc.offsets")
        if isinstance(a, DenseArrayBase):
            offsets = [int(v) for v in a.get_values()]
            if len(offsets) != len(op.results):
                raise OpError(op, f"{PASS}: 'tc.offsets' needs one offset per result")
        for v in op.arguments:
            if v not in self.buffers:
                raise OpError(op, f"{PASS}: an operand of the call of @{name} has no buffer")
        args = [self.buffers[v] for v in op.arguments]
        for n, r in enumerate(op.results):
            self.buffers[r] = self.result_buffer(op, n, offsets)
            if r not in self.out_args and r.name_hint:
                self.buffers[r].name_hint = r.name_hint
            args.append(self.buffers[r])
        expected = list(callee.function_type.inputs.data)
        got = [a.type for a in args]
        if expected != got:
            raise OpError(
                op,
                f"{PASS}: the call of @{name} passes ({', '.join(map(str, got))}), "
                f"but the kernel takes ({', '.join(map(str, expected))})",
            )
        self.ops.append(func.CallOp(name, args, []))

    def constant(self, op: graph.ConstantOp) -> None:
        t = op.outputs[0].type
        mtype = _memref(t, op)
        alloc = loop.AllocOp("constant", "global", mtype)
        alloc.buffer.name_hint = op.outputs[0].name_hint
        self.ops.append(alloc)
        self.buffers[op.outputs[0]] = alloc.buffer
        values = op.value.get_values()
        shape = mtype.get_shape()
        count = prod(shape)
        element = mtype.element_type
        if len(set(values)) == 1 or count == 0:
            value = self.scalar(values[0] if values else 0, element)
            self.ops.append(value)
            self.ops.append(self.fill(alloc.buffer, value.result, list(shape)))
            return
        if count > MAX_INLINE_ELEMENTS:
            raise OpError(
                op,
                f"{PASS}: a graph.constant of {count} distinct elements is too large to "
                f"write inline (at most {MAX_INLINE_ELEMENTS}); make it a graph.weight",
            )
        for flat, v in enumerate(values):
            idx = [arith.ConstantOp(IntegerAttr(int(i), IndexType())) for i in np.unravel_index(flat, shape)]
            value = self.scalar(v, element)
            self.ops.extend([*idx, value, memref.StoreOp.get(value, alloc.buffer, idx)])

    @staticmethod
    def scalar(v, element: Attribute) -> arith.ConstantOp:
        if isinstance(element, IntegerType):
            return arith.ConstantOp(IntegerAttr(int(v), element))
        return arith.ConstantOp(FloatAttr(float(v), element))

    @staticmethod
    def fill(buffer: SSAValue, value: SSAValue, shape: list[int]) -> Operation:
        """Loops storing `value` to every element of `buffer`."""
        return _loop_nest(shape, lambda idx: [memref.StoreOp.get(value, buffer, idx)])

    @staticmethod
    def copy(source: SSAValue, target: SSAValue) -> Operation:
        """Loops copying `source` into `target` (the same memref type)."""
        shape = list(target.type.get_shape())  # type: ignore[attr-defined]

        def body(idx):
            load = memref.LoadOp.get(source, idx)
            return [load, memref.StoreOp.get(load.res, target, idx)]

        return _loop_nest(shape, body)

    # -- the memory plan -------------------------------------------------------------

    def check_arena(self) -> None:
        """Two arena values alive at once (a kernel's operands and results are) must
        not share bytes: the kernels take `noalias` arguments."""
        if not self._views:
            return
        order = {op: n for n, op in enumerate(self.f.body.block.ops)}
        spans = []
        for view, call, n in self._views:
            result = call.results[n]
            last = max([order[u.operation] for u in result.uses], default=order[call])
            size = prod(view.result.type.get_shape()) * max(1, view.result.type.element_type.bitwidth // 8)
            spans.append((order[call], last, view.offset.data, size, call))
        for i, (f1, l1, o1, s1, c1) in enumerate(spans):
            for f2, l2, o2, s2, c2 in spans[i + 1 :]:
                if f2 <= l1 and f1 <= l2 and o1 < o2 + s2 and o2 < o1 + s1:
                    raise OpError(
                        c2,
                        f"{PASS}: 'tc.offsets' puts this result at bytes [{o2}, {o2 + s2}) of "
                        f"the arena, which a value still alive (from @{c1.callee.root_reference.data}) "
                        f"uses at [{o1}, {o1 + s1})",
                    )
