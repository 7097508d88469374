"""What a compiled program did, counted as it ran: `CompiledModel.counters(x)`.

`CounterBuild` compiles an instrumented copy of a loop-level module once: the
tensor intrinsics and copies become loops (`lower-tensor-intrin`,
`expand-dma`), `analysis/loop_counts.py` lists its blocks with what each does
per run and how often the static analysis says it runs, `instrument-counters`
puts a counter in each, and the rest of `loop-to-llvm` compiles it. A run
zeroes the counters, calls the entry point with them as its last argument and
returns `Counts`: per block how often it ran, per function the loop
iterations, FLOPs, MACs, bytes read and written (and per buffer), guards
evaluated and taken — beside the static counts of the same blocks, which they
equal on every program whose control flow does not depend on data.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilecraft.analysis.loop_counts import CountedBlock, calls_per_run, counted_blocks, function_totals


@dataclass
class Counts:
    """One instrumented run: `runs[k]` is how often block `blocks[k]` ran."""

    blocks: list[CountedBlock]
    runs: np.ndarray
    calls: dict[str, int | None]  # static: runs of each function per call of the entry

    def kernels(self) -> dict[str, dict[str, object]]:
        """Per function, as counted: calls, iterations, flops, macs, bytes_read,
        bytes_written, guards, guards_taken and `buffers` ({name: [read, written]})."""
        return function_totals(self.blocks, self.calls, [int(n) for n in self.runs])

    def static(self) -> dict[str, dict[str, object]]:
        """The same, as the static analysis counts it."""
        return function_totals(self.blocks, self.calls)

    def totals(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for row in self.kernels().values():
            for key, value in row.items():
                if isinstance(value, int):
                    totals[key] = totals.get(key, 0) + value
        return totals

    def mismatches(self) -> list[str]:
        """Blocks whose count differs from the static one (or whose static count
        is unknown): `@f: loop %i: ran 12, static 10`."""
        out = []
        for block, ran in zip(self.blocks, self.runs):
            per_call = self.calls.get(block.function)
            expected = None if block.executions is None or per_call is None else block.executions * per_call
            if expected != int(ran):
                why = f" ({block.why})" if block.why else ""
                out.append(f"@{block.function}: {block.label}: ran {int(ran)}, static {expected}{why}")
        return out

    def equal_static(self) -> bool:
        return not self.mismatches()


class CounterBuild:
    """The instrumented build of a loop-level module (compiled once, run many times;
    `optimize=False` skips LLVM's O3: a build to be run once or twice compiles
    several times faster and counts the same)."""

    def __init__(self, module: ModuleOp, entry: str, num_threads: int | None = None, optimize: bool = True):
        from tilecraft.backends.llvm.jit import jit_module, signatures_of
        from tilecraft.pipelines.loop_to_llvm import lower_to_llvm_dialect
        from tilecraft.transforms.expand_dma import ExpandDmaPass
        from tilecraft.transforms.instrument_counters import instrument
        from tilecraft.transforms.lower_tensor_intrin import LowerTensorIntrinPass

        clone = module.clone()
        LowerTensorIntrinPass(target="llvm").apply(Context(), clone)
        ExpandDmaPass().apply(Context(), clone)
        self.blocks = counted_blocks(clone)
        self.calls = calls_per_run(clone, self.blocks)
        instrument(clone)
        signatures = signatures_of([f for f in clone.ops if isinstance(f, func.FuncOp)])
        lowered = lower_to_llvm_dialect(clone, in_place=True)
        self._jit = jit_module(lowered, signatures, num_threads=num_threads, optimize=optimize)
        self.entry = entry

    def run_addresses(self, addresses: Sequence[int]) -> Counts:
        """Call the entry point with raw data addresses (a model's ports)."""
        runs = np.zeros(len(self.blocks), np.int64)
        function = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (len(addresses) + 1))(self._jit.address(self.entry))
        function(*addresses, runs.ctypes.data)
        return Counts(self.blocks, runs, self.calls)

    def run(self, *arrays: np.ndarray) -> Counts:
        """Call the entry point with arrays (checked as a built function's are)."""
        runs = np.zeros(len(self.blocks), np.int64)
        self._jit[self.entry](*arrays, runs)
        return Counts(self.blocks, runs, self.calls)
