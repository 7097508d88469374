"""plan-memory: place every intermediate tensor of a function in one arena.

After fuse-ops a function is a sequence of kernels (`graph.fused`); each result
needs a buffer from the kernel that writes it to the last kernel that reads it.
Two values whose lifetimes do not overlap can share bytes, so the runtime needs
one arena much smaller than the naive sum of all buffers.

Algorithm (static, by program order):

1. Planned values: results of the function's top-level ops except weights and
   constants. Every graph compute op must be in a group (run fuse-ops first;
   `fuse-ops{enabled=false}` makes each op a group of its own): a kernel is what
   reads and writes the arena, and an op outside any group would be wrapped in one
   later, after its offsets were decided. A value the function returns lives in the caller's output buffer
   and gets offset -1. An in-place concat (concat-in-place: a top-level
   `graph.concat {tc.in_place}`) is planned like a kernel's result, and its
   operands live in its buffer, each at its byte offset there (nested concats
   likewise): that buffer is taken when the first of them is written and kept
   until the last of them, or the concat, is read.
2. Liveness: a value is live from the op that defines it to its last reader (a
   reader nested in a region counts at its top-level op). A kernel never writes
   into a buffer it reads, so a value's bytes are free only *after* its last
   reader, not at it.
3. Greedy best fit in program order: before each op, the buffers of values whose
   last reader came before it return to the free list (adjacent blocks merge);
   each result takes the smallest free block that fits, split off its start,
   or grows the arena at its end. Sizes round up to 64 bytes, so every offset
   is 64-byte aligned.

A value whose type has sizes known only when the function runs (`?`s named by
the encoding) is not planned: its offset is -2, a buffer of its own that the
function allocates with those sizes (the arena is static).

Each planned op gets `tc.offsets = array<i64: ...>` (one byte offset per
result, -1 for function results, -2 as said) and the function `tc.arena_bytes` and
`tc.naive_bytes` (the sum of the planned sizes). `plan(func_op)` returns the
same decisions as a `MemoryPlan` for the runtime.

```mlir
%a = graph.fused "fused_dense_relu" (%x, %w1) : (...) -> (tensor<1x256xf32>) {...}
%b = graph.fused "fused_dense_relu_1" (%a, %w2) : (...) -> (tensor<1x256xf32>) {...}
%c = graph.fused "fused_dense_relu_2" (%b, %w3) : (...) -> (tensor<1x256xf32>) {...}
```
becomes (`%c` reuses `%a`'s bytes)
```mlir
func.func @main(...) attributes {tc.arena_bytes = 2048 : i64, tc.naive_bytes = 3072 : i64} {
  %a = graph.fused "fused_dense_relu" ... {tc.offsets = array<i64: 0>}
  %b = graph.fused "fused_dense_relu_1" ... {tc.offsets = array<i64: 1024>}
  %c = graph.fused "fused_dense_relu_2" ... {tc.offsets = array<i64: 0>}
```
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from tilecraft.dialects import graph
from tilecraft.dialects.graph.shapes import symbolic_dims
from tilecraft.transforms.concat_in_place import ALIGN, element_bytes, is_in_place, part_offsets
from tilecraft.utils.diagnostics import OpError


# The offset of a value whose size is known only when the function runs: a buffer
# of its own, allocated with that size (not in the arena).
OWN_BUFFER = -2


def byte_size(t) -> int:
    """Bytes of a static tensor type, rounded up to ALIGN."""
    if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
        raise ValueError(f"cannot plan memory for {t}: its shape must be static (run infer-shapes)")
    raw = math.prod(t.get_shape()) * element_bytes(t)
    return max(ALIGN, -(-raw // ALIGN) * ALIGN)


@dataclass
class MemoryPlan:
    """Where each planned value lives: `offsets[v]` bytes into an arena of
    `arena_bytes` (-1 for function results); `live[v]` is (def, last use) in
    top-level op indices."""

    offsets: dict[SSAValue, int] = field(default_factory=dict)
    sizes: dict[SSAValue, int] = field(default_factory=dict)
    live: dict[SSAValue, tuple[int, int]] = field(default_factory=dict)
    parts: dict[SSAValue, tuple[SSAValue, int]] = field(default_factory=dict)  # (in-place concat, byte offset)
    arena_bytes: int = 0
    naive_bytes: int = 0


class FreeList:
    """Free byte ranges of a growing arena, sorted by offset."""

    def __init__(self) -> None:
        self.blocks: list[tuple[int, int]] = []  # (offset, size)
        self.end = 0

    def allocate(self, size: int) -> int:
        fits = [(s, o) for o, s in self.blocks if s >= size]
        if fits:
            s, o = min(fits)
            self.blocks.remove((o, s))
            if s > size:
                bisect.insort(self.blocks, (o + size, s - size))
            return o
        if self.blocks and sum(self.blocks[-1]) == self.end:  # grow the last free block
            o, _ = self.blocks.pop()
        else:
            o = self.end
        self.end = o + size
        return o

    def free(self, offset: int, size: int) -> None:
        bisect.insort(self.blocks, (offset, size))
        merged: list[tuple[int, int]] = []
        for o, s in self.blocks:
            if merged and sum(merged[-1]) == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + s)
            else:
                merged.append((o, s))
        self.blocks = merged


def _top_level(op: Operation, func_op: func.FuncOp) -> Operation:
    while op.parent_op() is not func_op:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def plan(func_op: func.FuncOp) -> MemoryPlan:
    """Liveness and best-fit offsets of a function's intermediate values."""
    ops = list(func_op.body.block.ops)
    index = {op: n for n, op in enumerate(ops)}
    result = MemoryPlan()
    returned = {v for op in ops if isinstance(op, func.ReturnOp) for v in op.operands}
    for n, op in enumerate(ops):
        if isinstance(op, (graph.WeightOp, graph.ConstantOp, func.ReturnOp)):
            continue
        if is_in_place(op):
            _place_parts(op, result, returned)
        elif isinstance(op, graph.GraphOp):
            raise OpError(
                op,
                f"plan-memory: {op.name} is in no fused group; run fuse-ops first "
                "(fuse-ops{enabled=false} puts every op in a group of its own)",
            )
        for v in op.results:
            if symbolic_dims(v.type):  # its size is known when the function runs
                result.offsets[v] = -1 if v in returned else OWN_BUFFER
                continue
            last = max((index[_top_level(u.operation, func_op)] for u in v.uses), default=n)
            try:
                result.sizes[v] = byte_size(v.type)
            except ValueError as e:
                raise OpError(op, f"plan-memory: {e}") from None
            result.live[v] = (n, last)
    # An in-place concat's buffer holds its parts: it is taken when the first of
    # them is written and kept until the last of them, or the concat, is read.
    span: dict[SSAValue, tuple[int, int]] = {}
    for v, (first, last) in result.live.items():
        root = _root(v, result)[0]
        old = span.get(root, (first, last))
        span[root] = (min(old[0], first), max(old[1], last))
    free = FreeList()
    dying = sorted((last, n) for n, (v, (_, last)) in enumerate(span.items()) if v not in returned)
    roots = list(span)
    released = 0
    for n, op in enumerate(ops):
        while released < len(dying) and dying[released][0] < n:  # read for the last time before op n
            v = roots[dying[released][1]]
            free.free(result.offsets[v], result.sizes[v])
            released += 1
        for v in op.results:
            if v not in result.live:
                continue
            if v in returned:
                result.offsets[v] = -1
                continue
            root, offset = _root(v, result)
            if root not in result.offsets:
                result.offsets[root] = free.allocate(result.sizes[root])
                result.naive_bytes += result.sizes[root]
            result.offsets[v] = result.offsets[root] + offset
    result.arena_bytes = free.end
    return result


def _root(v: SSAValue, memory: MemoryPlan) -> tuple[SSAValue, int]:
    """The outermost in-place concat holding `v` (itself if none), and `v`'s byte
    offset in it."""
    offset = 0
    while v in memory.parts:
        v, at = memory.parts[v]
        offset += at
    return v, offset


def _place_parts(concat: graph.ConcatOp, memory: MemoryPlan, returned: set[SSAValue]) -> None:
    """Record where an in-place concat's operands live in its buffer (concat-in-place
    chose them; hand-written IR is checked here)."""
    offsets = part_offsets(concat)
    if offsets is None or any(o % ALIGN for o in offsets):
        raise OpError(
            concat,
            "plan-memory: an in-place concat's operands must be contiguous runs of its buffer "
            f"at multiples of {ALIGN} bytes (every axis before the concat axis of extent 1)",
        )
    if concat.outputs[0] in returned:
        raise OpError(concat, "plan-memory: an in-place concat cannot be a result of the function")
    for v, at in zip(concat.inputs, offsets):
        owner = v.owner
        if v not in memory.sizes or v in returned or v in memory.parts:
            what = ("a result of the function" if v in returned else "a part of another in-place concat"
                    if v in memory.parts else "not a kernel's result")  # fmt: skip
            raise OpError(concat, f"plan-memory: the in-place concat's operand {v.name_hint or owner.name} is {what}")
        memory.parts[v] = (concat.outputs[0], at)


def annotate(func_op: func.FuncOp, memory: MemoryPlan) -> None:
    for op in func_op.body.block.ops:
        offsets = [memory.offsets[v] for v in op.results if v in memory.offsets]
        if offsets:
            op.attributes["tc.offsets"] = DenseArrayBase.from_list(i64, offsets)
    func_op.attributes["tc.arena_bytes"] = IntegerAttr(memory.arena_bytes, i64)
    func_op.attributes["tc.naive_bytes"] = IntegerAttr(memory.naive_bytes, i64)


@dataclass(frozen=True)
class PlanMemoryPass(ModulePass):
    """Assign arena offsets to intermediate values by liveness (see the docstring)."""

    name = "plan-memory"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                annotate(f, plan(f))
