"""The execution plan of a compiled model: buffers ("slots") and kernel calls.

The graph function left by convert-graph-to-te is a straight line of
`func.call @kernel(...)` over inputs, weights and constants (and `graph.reshape`
views where a scalar meets a kernel's one-element tensor); the plan is that line,
precomputed:

- a **slot** per value: an `input` (bound per call), a `const` (a weight or
  constant, bound once), an `arena` view (at the byte offset plan-memory chose,
  `tc.offsets`), a `buffer` of its own (no plan), or an `output` (fresh per call,
  so results the caller keeps are never overwritten);
- a **step** per call: the kernel's name and its argument slots (the call's
  operands, then its results — the loop-level calling convention).

`Plan` is plain data (saved as JSON next to a shared library); `check_arena`
verifies a memory plan before it is trusted: kernels take `noalias` arguments, so
two values alive at once must not share bytes.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, StringAttr, TensorType

from tilecraft.dialects import graph
from tilecraft.topi.common import te_dtype
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.weights import WeightStore

ALIGNMENT = 64


@dataclass
class Slot:
    kind: str  # input | const | arena | buffer | output
    shape: list[int]
    dtype: str
    offset: int = -1  # arena: byte offset
    ref: str = ""  # const: key of its array; input: the input's name

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * np.dtype(self.dtype).itemsize


@dataclass
class Step:
    kernel: str
    args: list[int]  # slot ids: the call's operands, then its results
    results: int  # how many of `args` (at the end) it writes


@dataclass
class Plan:
    inputs: list[int]  # slot ids, in the function's argument order
    outputs: list[int]  # slot ids, in the function's result order
    slots: list[Slot] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    arena_bytes: int = 0
    naive_bytes: int = 0

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(data: dict) -> Plan:
        plan = Plan(data["inputs"], data["outputs"], arena_bytes=data["arena_bytes"], naive_bytes=data["naive_bytes"])
        plan.slots = [Slot(**s) for s in data["slots"]]
        plan.steps = [Step(**s) for s in data["steps"]]
        return plan


def _dtype(t) -> str:
    name = te_dtype(t)
    return "bool" if name == "bool" else name


def _shape(t) -> list[int]:
    assert isinstance(t, TensorType)
    return [int(n) for n in t.get_shape()]


def build_plan(main: func.FuncOp, store: WeightStore | None) -> tuple[Plan, dict[str, np.ndarray]]:
    """The plan of the graph function `main`, and the arrays of its const slots."""
    from tilecraft.lowering.convert_graph_to_te import constant_value

    slots: list[Slot] = []
    ids: dict[object, int] = {}
    constants: dict[str, np.ndarray] = {}
    module = main.parent_op()

    def add(value, slot: Slot) -> int:
        slots.append(slot)
        ids[value] = len(slots) - 1
        return ids[value]

    inputs = []
    for n, arg in enumerate(main.body.block.args):
        name = f"arg{n}"
        if main.arg_attrs is not None:
            attr = main.arg_attrs.data[n].data.get("tc.name")
            if isinstance(attr, StringAttr):
                name = attr.data
        inputs.append(add(arg, Slot("input", _shape(arg.type), _dtype(arg.type), ref=name)))
    ret = main.body.block.last_op
    # graph.reshape in the graph function (a scalar passed to a kernel as its
    # one-element tensor) is a view: its result shares its operand's slot.
    alias = {
        op.results[0]: op.operands[0] for op in main.body.block.ops if isinstance(op, graph.ReshapeOp)
    }

    def root(v):
        while v in alias:
            v = alias[v]
        return v

    returned = {root(v) for v in ret.operands} if isinstance(ret, func.ReturnOp) else set()
    steps: list[Step] = []
    naive = 0
    for op in main.body.block.ops:
        if isinstance(op, (graph.WeightOp, graph.ConstantOp)):
            value = constant_value(op, module)
            key = op.weight_name.data if isinstance(op, graph.WeightOp) else f"constant{len(constants)}"
            t = op.results[0].type
            constants[key] = np.ascontiguousarray(value, dtype=_dtype(t))
            add(op.results[0], Slot("const", _shape(t), _dtype(t), ref=key))
        elif isinstance(op, func.CallOp):
            offsets = _offsets(op)
            args = [ids[v] for v in op.arguments]
            for n, r in enumerate(op.results):
                slot = Slot("buffer", _shape(r.type), _dtype(r.type))
                naive += slot.nbytes
                if r in returned:
                    slot.kind = "output"
                elif offsets is not None and offsets[n] >= 0:
                    slot.kind, slot.offset = "arena", offsets[n]
                args.append(add(r, slot))
            steps.append(Step(op.callee.root_reference.data, args, len(op.results)))
        elif isinstance(op, graph.ReshapeOp):
            ids[op.results[0]] = ids[op.operands[0]]
        elif isinstance(op, func.ReturnOp):
            break
        else:
            raise OpError(op, f"the runtime cannot execute '{op.name}' in the graph function; "
                          "every compute op must be in a kernel (convert-graph-to-te)")
    outputs = [ids[v] for v in ret.operands]
    for v in ret.operands:  # a returned view has the shape the function returns
        slots[ids[v]].shape = _shape(v.type)
    arena = _int_attr(main, "tc.arena_bytes")
    plan = Plan(inputs, outputs, slots, steps, arena_bytes=arena or 0)
    plan.naive_bytes = _int_attr(main, "tc.naive_bytes") or naive
    if not check_arena(plan):
        warnings.warn("the memory plan lets live values share bytes; using separate buffers", stacklevel=2)
        for s in plan.slots:
            if s.kind == "arena":
                s.kind, s.offset = "buffer", -1
        plan.arena_bytes = 0
    if not any(s.kind == "arena" for s in plan.slots):
        plan.arena_bytes = 0
    return plan, constants


def _offsets(op: func.CallOp) -> list[int] | None:
    a = op.attributes.get("tc.offsets")
    if isinstance(a, DenseArrayBase):
        return [int(v) for v in a.get_values()]
    return None


def _int_attr(op, key: str) -> int | None:
    a = op.attributes.get(key)
    return int(a.value.data) if isinstance(a, IntegerAttr) else None


def check_arena(plan: Plan) -> bool:
    """Whether no two arena values alive at the same step overlap in bytes (a
    kernel's inputs and outputs are alive together), and all fit the arena."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for n, step in enumerate(plan.steps):
        for a in step.args:
            if plan.slots[a].kind == "arena":
                first.setdefault(a, n)
                last[a] = n
    live = sorted(first, key=lambda a: first[a])
    for i, a in enumerate(live):
        sa = plan.slots[a]
        if sa.offset < 0 or sa.offset + sa.nbytes > plan.arena_bytes:
            return False
        for b in live[i + 1 :]:
            if first[b] > last[a]:
                continue
            sb = plan.slots[b]
            if sa.offset < sb.offset + sb.nbytes and sb.offset < sa.offset + sa.nbytes:
                return False
    return True


def planned_bytes(plan: Plan) -> int:
    """Bytes of intermediate values: the arena, plus buffers outside it."""
    return plan.arena_bytes + sum(s.nbytes for s in plan.slots if s.kind == "buffer")
