"""`memory-plan`: the memory a compiled model uses, as its loop program says.

plan-memory gives a model's intermediate values offsets in one arena, reusing
the bytes of a value no later kernel reads: the entry function records the
arena it chose (`tc.arena_bytes`) and what a buffer per value would take
(`tc.naive_bytes`). Per function this analysis reports those two (the entry's),
the bytes of the weights it takes (arguments marked `tc.weight`), and the
scratch buffers its kernels allocate per call (`loop.alloc`, by scope: "global"
on the heap, "local" on the stack of the thread that runs the block).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp

from tilecraft.analysis.framework import Analysis, OpFacts, Result, register_analysis
from tilecraft.analysis.loop_counts import functions
from tilecraft.dialects import loop
from tilecraft.utils.dtypes import numpy_dtype


def memref_bytes(t) -> int:
    return math.prod(t.get_shape()) * numpy_dtype(t).itemsize if isinstance(t, MemRefType) else 0


def _attr(f: func.FuncOp, key: str) -> int | None:
    a = f.attributes.get(key)
    return int(a.value.data) if isinstance(a, IntegerAttr) else None


@register_analysis
class MemoryPlan(Analysis):
    """Per function: the arena and the naive sum (the entry's), weight bytes,
    scratch bytes by scope."""

    name = "memory-plan"
    level = "loop"

    def ops(self, module: ModuleOp):
        return functions(module)

    def map(self, op, deps: Mapping[str, Result]):
        assert isinstance(op, func.FuncOp)
        values: dict[str, object] = {}
        arena, naive = _attr(op, "tc.arena_bytes"), _attr(op, "tc.naive_bytes")
        if arena is not None:
            values |= {"arena_bytes": arena, "naive_bytes": naive or 0}
        attrs = op.arg_attrs.data if op.arg_attrs is not None else ()
        weights = sum(memref_bytes(t) for t, a in zip(op.function_type.inputs.data, attrs) if "tc.weight" in a.data)
        if weights:
            values["weights_bytes"] = weights
        for alloc in op.walk():
            if isinstance(alloc, loop.AllocOp):
                key = f"{alloc.scope.data.value}_scratch_bytes"
                values[key] = int(values.get(key, 0)) + memref_bytes(alloc.buffer.type)  # type: ignore[arg-type]
        return values or None

    def reduce(self, facts: Sequence[OpFacts], deps) -> dict[str, object]:
        totals = super().reduce(facts, deps)
        for key in ("global_scratch_bytes", "local_scratch_bytes"):
            if key in totals:  # (kernels run one after another: the largest is what is held at once)
                totals[f"max_{key}"] = max(int(f.values.get(key, 0)) for f in facts)  # type: ignore[arg-type]
                del totals[key]
        return totals
