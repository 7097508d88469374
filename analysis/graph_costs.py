"""What a model costs, op by op, at graph level: `op-histogram`, `macs`, `bytes`,
`intensity` (which requires the two before it), `memory` (activation bytes alive
at each op and their peak) and `roofline` (each op against a machine's peak FLOP/s
and bandwidth).

MACs count the multiply-adds of the model as written (a conv's
N * K * C/groups * R * S * P * Q, a dense's or matmul's M * N * K; a batch norm's
one per element), FLOPs twice those plus one per output element of an
elementwise op, per input element of a reduction or pooling window. An op with no
rule is reported as unknown, never counted as zero; ops that only move data
(reshape, transpose, concat, ...) and values (weights, constants) cost no FLOPs.
Bytes are those of the op's operand and result tensors (what it reads and
writes if nothing stays in cache); `weights_bytes` those of the weights and
constants the model holds.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from tilecraft.analysis.framework import Analysis, OpFacts, Result, UnknownSize, register_analysis
from tilecraft.analysis.machine import Machine, host_machine
from tilecraft.dialects import graph
from tilecraft.utils.dtypes import numpy_dtype

# Ops that move or select data and compute nothing.
MOVES = (
    graph.ReshapeOp, graph.FlattenOp, graph.SqueezeOp, graph.UnsqueezeOp, graph.TransposeOp, graph.ConcatOp,
    graph.SplitOp, graph.SliceOp, graph.PadOp, graph.GatherOp, graph.GatherElementsOp, graph.GatherNDOp,
    graph.LayoutTransformOp, graph.BroadcastToOp, graph.BitcastOp, graph.ScatterElementsOp, graph.ScatterNDOp,
)  # fmt: skip
VALUES = (graph.ConstantOp, graph.WeightOp)
# FLOPs per input element.
PER_INPUT = (graph.ReduceSumOp, graph.ReduceMeanOp, graph.ReduceMaxOp, graph.ReduceMinOp, graph.ReduceProdOp,
             graph.GlobalAvgPool2dOp, graph.CumulativeOp)  # fmt: skip
# FLOPs per input element of a normalization: softmax (max, subtract, exp, sum, divide),
# layer norm (mean, subtract, square, mean, scale and shift).
PER_INPUT_NORM = {graph.SoftmaxOp: 5, graph.LayerNormOp: 7}


def elements(value) -> int:
    t = value.type
    if not isinstance(t, TensorType):
        return 0
    if any(d < 0 for d in t.get_shape()):
        raise UnknownSize(f"{t} has a size known only when the model runs (give the sizes: "
                          "input_shapes=, tilecraft-analyze --input-shape)")  # fmt: skip
    return math.prod(t.get_shape())


def nbytes(value) -> int:
    t = value.type
    return elements(value) * numpy_dtype(t).itemsize if isinstance(t, TensorType) else 0


def graph_ops(op: Operation) -> bool:
    """An op `map` describes: a graph op outside the values, not a group."""
    return isinstance(op, graph.GraphOp)


@register_analysis
class OpHistogram(Analysis):
    """How many ops of each kind the model has."""

    name = "op-histogram"

    def map(self, op, deps):
        return {"op": op.name} if graph_ops(op) or isinstance(op, VALUES) else None

    def reduce(self, facts: Sequence[OpFacts], deps) -> dict[str, object]:
        return dict(Counter(str(f.values["op"]) for f in facts).most_common())


def conv_macs(op: graph.Conv2dOp) -> int | str:
    """N * K * C/groups * R * S * P * Q (any spatial rank), or why not known."""
    if op.layouts() != (0, (0, 0), 0) or op.algorithm != graph.ConvAlgorithm.DIRECT:
        return "a blocked or Winograd conv (count the model before alter-layout)"
    weight = op.weight.type
    assert isinstance(weight, TensorType)
    _, per_group, *window = weight.get_shape()
    return elements(op.outputs[0]) * per_group * math.prod(window)


def op_macs(op: Operation) -> int | str | None:
    """Multiply-adds of `op`, a reason if it has them but they are not known, None if it has none."""
    if isinstance(op, graph.Conv2dOp):
        return conv_macs(op)
    if isinstance(op, graph.DenseOp):
        if op.weight_layout != graph.WeightLayout.NK:
            return "a dense with a packed weight (count the model before alter-layout)"
        return elements(op.outputs[0]) * graph.shape_of(op.input.type)[-1]
    if isinstance(op, graph.MatmulOp):
        return elements(op.outputs[0]) * graph.shape_of(op.lhs.type)[-1]
    if isinstance(op, graph.BatchNormOp):
        return elements(op.outputs[0])
    return None


@register_analysis
class Macs(Analysis):
    """Multiply-adds and floating-point (or integer) operations per op."""

    name = "macs"

    def map(self, op, deps):
        if not graph_ops(op):
            return None
        macs = op_macs(op)
        if isinstance(macs, str):
            return {"macs": None, "flops": None, "unknown": macs}
        if macs is not None:
            return {"macs": macs, "flops": 2 * macs}
        out = sum(elements(r) for r in op.results)
        if isinstance(op, MOVES):
            return {"macs": 0, "flops": 0}
        if isinstance(op, (graph.MaxPool2dOp, graph.AvgPool2dOp, graph.MaxPoolIndicesOp)):
            return {"macs": 0, "flops": out * math.prod(op.kernel)}
        if isinstance(op, PER_INPUT):
            return {"macs": 0, "flops": elements(op.inputs[0])}
        if type(op) in PER_INPUT_NORM:
            return {"macs": 0, "flops": PER_INPUT_NORM[type(op)] * elements(op.inputs[0])}
        if op.has_trait(graph.Injective) or op.has_trait(graph.Broadcast):
            return {"macs": 0, "flops": out}  # elementwise: one operation per output element
        return {"macs": None, "flops": None, "unknown": "no cost rule for this op"}


@register_analysis
class Bytes(Analysis):
    """Bytes each op reads and writes; the weights' and constants' bytes."""

    name = "bytes"

    def map(self, op, deps):
        if isinstance(op, VALUES):
            return {"weights_bytes": sum(nbytes(r) for r in op.results)}
        if not graph_ops(op):
            return None
        read = sum(nbytes(v) for v in op.operands)
        written = sum(nbytes(r) for r in op.results)
        return {"bytes_read": read, "bytes_written": written}


def flops_and_bytes(op: Operation, deps: Mapping[str, Result]) -> tuple[object, int] | None:
    """(FLOPs, bytes read and written) of `op` from the `macs` and `bytes` results, or
    None where either does not describe it (FLOPs may be None: unknown)."""
    flops = deps["macs"].by_op().get(op)
    moved = deps["bytes"].by_op().get(op)
    if flops is None or moved is None or "bytes_read" not in moved.values:
        return None
    return flops.values["flops"], int(moved.values["bytes_read"]) + int(moved.values["bytes_written"])  # type: ignore[arg-type]


@register_analysis
class Intensity(Analysis):
    """FLOPs per byte moved, per op and for the model (the roofline's x axis)."""

    name = "intensity"
    requires = ("macs", "bytes")

    def map(self, op, deps: Mapping[str, Result]):
        found = flops_and_bytes(op, deps)
        if found is None:
            return None
        value, total = found
        return {"intensity": value / total if isinstance(value, int) and total else None}

    def reduce(self, facts, deps) -> dict[str, object]:
        moved = deps["bytes"].totals
        total = int(moved.get("bytes_read", 0)) + int(moved.get("bytes_written", 0))  # type: ignore[arg-type]
        flops = deps["macs"].totals.get("flops", 0)
        return {"intensity": flops / total if isinstance(flops, int) and total else None}


@register_analysis
class Memory(Analysis):
    """Activation bytes alive at each op, in program order, and their peak: at an
    op, its operands and results and every value a later op reads (the function's
    inputs included, its weights and constants not: those stay resident). The peak
    is what a plan that reuses no buffer in place needs at least for activations."""

    name = "memory"

    def run(self, module, deps):
        live_at: dict[Operation, int] = {}
        for f in module.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                live_at |= live_bytes(f)
        # (a result of this run, handed to map as one: the instance keeps nothing)
        return super().run(module, {**deps, "memory": Result(self.name, [], {"live_at": live_at})})

    def map(self, op, deps):
        live_at = deps["memory"].totals["live_at"]
        assert isinstance(live_at, dict)
        return {"live_bytes": live_at[op]} if op in live_at else None

    def reduce(self, facts, deps) -> dict[str, object]:
        live = [f.values["live_bytes"] for f in facts]
        return {"peak_live_bytes": max((v for v in live if isinstance(v, int)), default=0)}


def live_bytes(function: func.FuncOp) -> dict[Operation, int]:
    """Bytes of activations alive while each top-level graph op of `function` runs."""
    ops = list(function.body.block.ops)
    position = {op: n for n, op in enumerate(ops)}

    def top(op: Operation) -> Operation:
        while op.parent_op() is not function:
            parent = op.parent_op()
            assert parent is not None
            op = parent
        return op

    def last_use(value) -> int:
        return max((position[top(use.operation)] for use in value.uses), default=-1)

    activations = [(v, -1) for v in function.body.block.args]
    activations += [(r, n) for n, op in enumerate(ops) if not isinstance(op, VALUES) for r in op.results]
    alive_from_to = [(start, max(last_use(v), start), nbytes(v)) for v, start in activations]
    return {
        op: sum(size for start, end, size in alive_from_to if start <= n <= end)
        for n, op in enumerate(ops)
        if graph_ops(op)
    }


@register_analysis
class Roofline(Analysis):
    """Each op on the roofline of a machine (analysis/machine.py; the host, measured
    once, unless one is given): its intensity, the FLOP/s it can attain
    (min(peak, bandwidth x intensity)), whether memory or compute bounds it, and
    the time that bound gives. A lower bound of run time, not a prediction of it."""

    name = "roofline"
    requires = ("macs", "bytes")

    def __init__(self, machine: Machine | None = None):
        self.machine = machine

    def run(self, module, deps):
        if self.machine is None:
            self.machine = host_machine()
        return super().run(module, deps)

    def map(self, op, deps: Mapping[str, Result]):
        found = flops_and_bytes(op, deps)
        if found is None:
            return None
        value, total = found
        if not isinstance(value, int) or not total:
            return None
        assert self.machine is not None
        intensity = value / total
        attainable = self.machine.attainable_gflops(intensity)
        return {
            "attainable_gflops": attainable,
            "bound": "compute" if intensity >= self.machine.ridge else "memory",
            "roofline_s": value / (attainable * 1e9) if value else total / (self.machine.bandwidth_gbs * 1e9),
        }

    def reduce(self, facts, deps) -> dict[str, object]:
        assert self.machine is not None
        bounds = Counter(str(f.values["bound"]) for f in facts)
        return {
            "roofline_s": sum(float(f.values["roofline_s"]) for f in facts),  # type: ignore[arg-type]
            "compute_bound_ops": bounds.get("compute", 0),
            "memory_bound_ops": bounds.get("memory", 0),
            "machine": self.machine.name,
            "peak_gflops": self.machine.peak_gflops,
            "bandwidth_gbs": self.machine.bandwidth_gbs,
        }
