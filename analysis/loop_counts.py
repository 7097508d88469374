"""How often each block of a loop-level program runs, and what it does each time.

A loop-level function is a tree of blocks: its entry, the body of each
`loop.for`, of each `loop.guard`, of each branch of an `scf.if`. What a block
does each time it runs is in its own ops (the *events*: floating-point
operations, multiply-adds, bytes loaded and stored per buffer); how often it
runs per call of its function is the number of points of its enclosing loops'
iteration space on which every enclosing condition holds. Conditions are
evaluated, not bounded: each one is computed with numpy over the grid of the
loop variables it reads (a tile's edge, a padding test, a guard that
`compute_at` left), so the count is exact; a condition on a loaded value or one
over more than `MAX_POINTS` points is reported as unknown with the reason.

This is what the schedule really does — padding, recomputation by `compute_at`,
the transforms of a Winograd convolution, the tail of a split that does not
divide — where the graph-level `macs` counts the model as written. The blocks
are numbered in the order `counted_blocks` walks them; `instrument-counters`
puts one counter in each block in that order, so the counts of the
instrumented build (`CompiledModel.counters`) can be compared block by block
with `executions` (they are equal on every static program).

The `loop-counts` analysis gives one row per function: its calls, the loop
iterations, FLOPs, MACs, bytes read and written, guards evaluated and taken;
it reads the module after `lower-tensor-intrin` and `expand-dma` (what
`tc.analyze(..., level="loop")` gives it), where intrinsics and copies are loops.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from tilecraft.analysis.framework import Analysis, OpFacts, Result, register_analysis
from tilecraft.dialects import loop
from tilecraft.utils.dtypes import numpy_dtype

# More grid points than this in one block's conditions: reported as unknown.
MAX_POINTS = 1 << 26
_CHUNK = 1 << 20  # points evaluated at once

FLOAT_OPS = {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.negf",
             "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf"}  # fmt: skip
FACTS = ("calls", "iterations", "flops", "macs", "bytes_read", "bytes_written", "guards", "guards_taken")


class NotStatic(Exception):
    """A count that depends on data, or is too large to enumerate."""


@dataclass
class Events:
    """What one run of a block does."""

    flops: int = 0
    macs: int = 0
    guards: int = 0  # loop.guard and scf.if ops evaluated
    read: Counter[str] = field(default_factory=Counter)  # bytes per buffer
    written: Counter[str] = field(default_factory=Counter)


@dataclass
class CountedBlock:
    """One block of a function, what it does and how often it runs per call."""

    function: str
    label: str  # "entry", "loop %i", "guard %ok", "then %c", "else %c"
    kind: str  # entry | loop | guard | then | else
    block: Block
    events: Events
    parent: int | None  # the index of the enclosing block (None for an entry)
    executions: int | None = None  # per call of `function`; None: unknown
    why: str = ""  # why unknown


def _lanes(value: SSAValue) -> int:
    t = value.type
    return math.prod(t.get_shape()) if isinstance(t, VectorType) else 1


def buffer_name(value: SSAValue) -> str:
    """The buffer a memref value is: a function argument's `tc.name` (or its
    position), a `loop.alloc`'s name, a view of either."""
    while True:
        if isinstance(value, BlockArgument):
            owner = value.block.parent_op()
            if isinstance(owner, func.FuncOp) and owner.arg_attrs is not None:
                name = owner.arg_attrs.data[value.index].data.get("tc.name")
                if name is not None:
                    return name.data  # type: ignore[attr-defined]
            return f"arg{value.index}"
        op = value.owner
        if isinstance(op, loop.AllocOp):
            return op.buffer_name.data
        if isinstance(op, loop.ViewOp):
            return f"{buffer_name(op.operands[0])}[{op.offset.data}]"
        if not op.operands:
            return op.name
        value = op.operands[0]


def _is_mac(op: Operation) -> bool:
    """A multiply whose one use is an add (of floats, or of integers that are not indices)."""
    if op.name not in ("arith.mulf", "arith.muli") or isinstance(op.results[0].type, IndexType):
        return False
    uses = list(op.results[0].uses)
    return len(uses) == 1 and uses[0].operation.name in ("arith.addf", "arith.addi")


def _element_bytes(t) -> int:
    return numpy_dtype(t.element_type if isinstance(t, VectorType) else t).itemsize


def block_events(block: Block) -> Events:
    """What the ops directly in `block` do each time it runs."""
    events = Events()
    for op in block.ops:
        name = op.name
        if name in FLOAT_OPS or (name.startswith("math.") and op.results):
            lanes = _lanes(op.results[0])
            events.flops += lanes * (2 if name == "math.fma" else 1)
            if name == "math.fma" or _is_mac(op):
                events.macs += lanes
        elif name == "arith.muli" and _is_mac(op):
            events.macs += _lanes(op.results[0])
        elif isinstance(op, (memref.LoadOp, vector.LoadOp)):
            events.read[buffer_name(op.operands[0])] += _element_bytes(op.results[0].type) * _lanes(op.results[0])
        elif isinstance(op, memref.StoreOp):
            events.written[buffer_name(op.memref)] += _element_bytes(op.value.type) * _lanes(op.value)
        elif isinstance(op, (loop.GuardOp, scf.IfOp)):
            events.guards += 1
        elif isinstance(op, vector.StoreOp):
            events.written[buffer_name(op.operands[1])] += _element_bytes(op.operands[0].type) * _lanes(op.operands[0])
    return events


def _label(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else ""


def _function_blocks(f: func.FuncOp) -> Iterator[tuple[Block, str, str, int | None]]:
    """(block, kind, label, parent position) in pre-order; positions count from 0 in `f`."""
    out: list[tuple[Block, str, str, int | None]] = []

    def visit(block: Block, kind: str, label: str, parent: int | None) -> None:
        here = len(out)
        out.append((block, kind, label, parent))
        for op in block.ops:
            if isinstance(op, loop.ForOp):
                visit(op.body.block, "loop", f"loop {_label(op.var)}".rstrip(), here)
            elif isinstance(op, loop.GuardOp):
                visit(op.body.block, "guard", f"guard {_label(op.cond)}".rstrip(), here)
            elif isinstance(op, scf.IfOp):
                visit(op.true_region.block, "then", f"then {_label(op.cond)}".rstrip(), here)
                if op.false_region.blocks:
                    visit(op.false_region.block, "else", f"else {_label(op.cond)}".rstrip(), here)
            else:
                for region in op.regions:
                    for b in region.blocks:
                        visit(b, "region", op.name, here)

    visit(f.body.block, "entry", "entry", None)
    yield from out


def functions(module: ModuleOp) -> list[func.FuncOp]:
    return [f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration]


def block_order(module: ModuleOp) -> list[tuple[func.FuncOp, Block, str]]:
    """(function, block, label) of every block, in the order counters are numbered."""
    return [(f, block, label) for f in functions(module) for block, _, label, _ in _function_blocks(f)]


def counted_blocks(module: ModuleOp) -> list[CountedBlock]:
    """Every block of every function of `module`, with its events and its
    executions per call of its function (the order `instrument-counters` numbers them)."""
    blocks: list[CountedBlock] = []
    for f in functions(module):
        base = len(blocks)
        for block, kind, label, parent in _function_blocks(f):
            counted = CountedBlock(f.sym_name.data, label, kind, block, block_events(block),
                                   None if parent is None else base + parent)  # fmt: skip
            try:
                counted.executions = executions_per_call(block, f)
            except NotStatic as e:
                counted.why = str(e)
            blocks.append(counted)
    return blocks


# -- executions per call: the enclosing loops' points where the conditions hold ------


def executions_per_call(block: Block, f: func.FuncOp) -> int:
    """How often `block` runs per call of `f` (NotStatic if it depends on data)."""
    loops: list[loop.ForOp] = []
    conditions: list[tuple[SSAValue, bool]] = []
    child: Block = block
    op = block.parent_op()
    while op is not None and op is not f:
        if isinstance(op, loop.ForOp):
            loops.append(op)
        elif isinstance(op, loop.GuardOp):
            conditions.append((op.cond, True))
        elif isinstance(op, scf.IfOp):
            conditions.append((op.cond, child.parent_region() is op.true_region))
        else:
            raise NotStatic(f"a block of {op.name}")
        parent_block = op.parent_block()
        assert parent_block is not None
        child, op = parent_block, parent_block.parent_op()
    loops.reverse()
    for l in loops:
        if not l.is_static:
            raise NotStatic(f"loop {_label(l.var)} runs to {_label(l.upper) or 'a value'} (known when it runs)")  # type: ignore[arg-type]
    if not conditions:
        return math.prod(max(0, l.extent) for l in loops)
    read = set()
    for value, _ in conditions:
        read |= _loop_vars(value)
    used = [l for l in loops if l.var in read]
    others = math.prod(max(0, l.extent) for l in loops if l.var not in read)
    points = math.prod(max(0, l.extent) for l in used)
    if points > MAX_POINTS:
        raise NotStatic(f"its conditions range over {points:,} points")
    if points == 0 or others == 0:
        return 0
    return others * _count_true(used, conditions)


def _loop_vars(value: SSAValue) -> set[SSAValue]:
    """The loop variables `value` is computed from (NotStatic if a load or an
    argument is among its sources)."""
    found: set[SSAValue] = set()
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if isinstance(v, BlockArgument):
            if isinstance(v.block.parent_op(), loop.ForOp):
                found.add(v)
                continue
            raise NotStatic(f"a condition reads argument {v.index} of its function")
        if v.owner.name not in _EVALUATORS and not isinstance(v.owner, arith.ConstantOp):
            raise NotStatic(f"a condition reads {v.owner.name}")
        stack.extend(v.owner.operands)
    return found


def _count_true(used: Sequence[loop.ForOp], conditions: Sequence[tuple[SSAValue, bool]]) -> int:
    """Points of the `used` loops' grid where every condition holds, a chunk of
    the outermost loop at a time."""
    inner = math.prod(l.extent for l in used[1:])
    step = max(1, _CHUNK // max(1, inner))
    first = used[0]
    total = 0
    for start in range(first.lb.data, first.ub.data, step):
        stop = min(first.ub.data, start + step)
        env: dict[SSAValue, np.ndarray] = {}
        for axis, l in enumerate(used):
            shape = [1] * len(used)
            lo, hi = (start, stop) if axis == 0 else (l.lb.data, l.ub.data)
            shape[axis] = hi - lo
            env[l.var] = np.arange(lo, hi, dtype=np.int64).reshape(shape)
        holds = np.ones([1] * len(used), dtype=bool)
        for value, polarity in conditions:
            truth = np.asarray(_evaluate(value, env)) != 0
            holds = holds & (truth if polarity else ~truth)
        grid = [stop - start, *(l.extent for l in used[1:])]
        total += int(np.count_nonzero(np.broadcast_to(holds, grid)))
    return total


def _trunc_div(a, b):
    q = np.floor_divide(a, b)
    return np.where((q < 0) & (q * b != a), q + 1, q)


def _cmpi(op: arith.CmpiOp, a, b):
    predicate = op.predicate.value.data
    if predicate >= 6:  # unsigned: ult ule ugt uge
        a, b = np.asarray(a).astype(np.uint64), np.asarray(b).astype(np.uint64)
        predicate -= 4
    return {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
            5: np.greater_equal}[predicate](a, b)  # fmt: skip


_BINARY = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.floordivsi": np.floor_divide, "arith.divui": np.floor_divide, "arith.remui": np.mod,
    "arith.divsi": _trunc_div, "arith.remsi": np.fmod,
    "arith.ceildivsi": lambda a, b: -np.floor_divide(-a, b),
    "arith.minsi": np.minimum, "arith.maxsi": np.maximum, "arith.minui": np.minimum, "arith.maxui": np.maximum,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
}  # fmt: skip
_CASTS = ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci")
_EVALUATORS = {*_BINARY, *_CASTS, "arith.cmpi", "arith.select"}


def _evaluate(value: SSAValue, env: dict[SSAValue, np.ndarray]):
    if value in env:
        return env[value]
    op = value.owner
    assert isinstance(op, Operation)
    if isinstance(op, arith.ConstantOp):
        attr = op.value
        result = int(attr.value.data) if isinstance(attr, IntegerAttr) else 0
        if isinstance(attr, IntegerAttr) and attr.type == IntegerType(1):
            result &= 1  # (an i1 `true` prints as -1)
    elif op.name in _BINARY:
        a, b = (_evaluate(v, env) for v in op.operands)
        result = _BINARY[op.name](np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
    elif isinstance(op, arith.CmpiOp):
        result = _cmpi(op, _evaluate(op.lhs, env), _evaluate(op.rhs, env)).astype(np.int64)
    elif isinstance(op, arith.SelectOp):
        c, a, b = (_evaluate(v, env) for v in op.operands)
        result = np.where(np.asarray(c) != 0, a, b)
    elif op.name == "arith.trunci":
        width = op.results[0].type.width.data  # type: ignore[attr-defined]
        result = np.asarray(_evaluate(op.operands[0], env)) & ((1 << width) - 1)
    elif op.name in _CASTS:
        result = _evaluate(op.operands[0], env)
    else:
        raise NotStatic(f"a condition reads {op.name}")
    env[value] = result  # (memoized for the other conditions of the chunk)
    return result


# -- per function: calls and totals ---------------------------------------------------


def calls_per_run(module: ModuleOp, blocks: Sequence[CountedBlock]) -> dict[str, int | None]:
    """How often each function runs per call of the module's entry (each function
    that no other calls runs once); None where a calling block's count is unknown."""
    defined = {f.sym_name.data: f for f in functions(module)}
    sites: dict[str, list[tuple[str, int | None]]] = {name: [] for name in defined}
    for b in blocks:
        for op in b.block.ops:
            if isinstance(op, func.CallOp) and op.callee.string_value() in defined:
                sites[op.callee.string_value()].append((b.function, b.executions))
    calls: dict[str, int | None] = {}

    def visit(name: str, active: frozenset[str]) -> int | None:
        if name not in calls:
            if not sites[name]:
                calls[name] = 1
            else:
                total: int | None = 0
                for caller, per_call in sites[name]:
                    outer = visit(caller, active | {name}) if caller not in active else None
                    total = None if total is None or outer is None or per_call is None else total + outer * per_call
                calls[name] = total
        return calls[name]

    for name in defined:
        visit(name, frozenset({name}))
    return calls


def function_totals(blocks: Sequence[CountedBlock], calls: Mapping[str, int | None],
                    counts: Sequence[int] | None = None) -> dict[str, dict[str, object]]:  # fmt: skip
    """Per function: `FACTS` summed over its blocks, each block weighted by how
    often it ran — `counts` (the instrumented build's, over all calls) or
    `executions` x calls (the static count). Unknown where a count is."""
    rows: dict[str, dict[str, object]] = {}
    for n, b in enumerate(blocks):
        row = rows.setdefault(b.function, {k: 0 for k in FACTS} | {"buffers": {}})
        if counts is not None:
            runs: int | None = counts[n]
        else:
            per_call = calls.get(b.function)
            runs = None if b.executions is None or per_call is None else b.executions * per_call
        if runs is None:
            row["unknown"] = f"{b.label}: {b.why or 'a caller runs an unknown number of times'}"
            continue
        if b.kind == "entry":
            row["calls"] = runs
        elif b.kind == "loop":
            row["iterations"] = int(row["iterations"]) + runs  # type: ignore[arg-type]
        elif b.kind in ("guard", "then"):
            row["guards_taken"] = int(row["guards_taken"]) + runs  # type: ignore[arg-type]
        row["flops"] = int(row["flops"]) + runs * b.events.flops  # type: ignore[arg-type]
        row["macs"] = int(row["macs"]) + runs * b.events.macs  # type: ignore[arg-type]
        buffers = row["buffers"]
        assert isinstance(buffers, dict)
        for name, nbytes in b.events.read.items():
            buffers.setdefault(name, [0, 0])[0] += runs * nbytes
            row["bytes_read"] = int(row["bytes_read"]) + runs * nbytes  # type: ignore[arg-type]
        for name, nbytes in b.events.written.items():
            buffers.setdefault(name, [0, 0])[1] += runs * nbytes
            row["bytes_written"] = int(row["bytes_written"]) + runs * nbytes  # type: ignore[arg-type]
        row["guards"] = int(row["guards"]) + runs * b.events.guards  # type: ignore[arg-type]
    return rows


@register_analysis
class LoopCounts(Analysis):
    """Per function of a loop-level module: calls, loop iterations, FLOPs, MACs,
    bytes read and written, guards evaluated and taken — what the schedule does."""

    name = "loop-counts"
    level = "loop"

    def ops(self, module: ModuleOp):
        return functions(module)

    def run(self, module: ModuleOp, deps: Mapping[str, Result]) -> Result:
        blocks = counted_blocks(module)
        rows = function_totals(blocks, calls_per_run(module, blocks))
        facts, unknown = [], []
        for f in functions(module):
            values = rows.get(f.sym_name.data)
            if values is None:
                continue
            values = {k: v for k, v in values.items() if k != "buffers"}
            if values.get("calls") == 0:
                continue  # (never called: a kernel another pass made redundant)
            facts.append(OpFacts(f, f.sym_name.data, values))
            if "unknown" in values:
                unknown.append(f"@{f.sym_name.data}: {values['unknown']}")
        return Result(self.name, facts, self.reduce(facts, deps), unknown)

    def map(self, op, deps):  # (run counts the whole module at once)
        raise NotImplementedError
