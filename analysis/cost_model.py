"""`cost-model`: the predicted time of each kernel of a loop-level module, from a
hardware description (analysis/machine.py: the host's, measured once, unless one
is given) and the loop IR alone, in well under a millisecond a kernel.

A roofline over the cache levels, taken nest by nest: each top-level statement of
a kernel (a loop nest: a padding stage, a conv, its epilogue) takes the time of
its busiest resource, and the kernel the sum of its statements'.

- compute: issue slots of floating-point (and non-index integer) arithmetic, at
  `fma_per_cycle x frequency_ghz` a core. A multiply whose only use is an add is
  one fused slot where the machine has FMA; a `math` op is the `MATH_OP_UNITS`
  slots of the polynomial the backend expands it into. Index arithmetic and
  conditions run on the integer units beside, and cost nothing, except in a
  vectorized loop when they differ per lane and are not `base + stride * lane`
  (a div or mod of the lane: a vector op, or one per lane for a division).
- L1: load and store instructions, each one slot of the L1's bandwidth in
  vector-register-wide reads.
- each further level (L2, L3, DRAM): the bytes that miss the level before it,
  at that level's bandwidth, from footprints and reuse (analysis/footprint.py:
  an access brings in once what it touches over the innermost loops one
  iteration of which fits the cache, and that again for every iteration of the
  loops outside them). A kernel whose whole footprint fits a level misses
  nothing there: its producers left its inputs warm.

What the loops make of an op: its count is the product of the extents of its
loops, but an op that does not depend on the inner ones is counted as LLVM hoists
it (loop-invariant code motion; not a load of a buffer the kernel stores to). In
a vectorized loop (one `loop-vectorize` can write as vector code:
`vectorization_blocker` finds none; at most `MAX_LANES` lanes a vector) an op
whose value differs per lane takes one slot per vector register of lanes, an op
the same in every lane one slot for all of them; an access is one per register
of lanes where contiguous, a single scalar where the same for every lane, and
one per lane (a gather or scatter) otherwise; both branches of an `scf.if` run,
under masks. Outside one an `scf.if` costs its dearer branch.

A statement's parallel loop (the outermost: `loop-outline-parallel` runs inner
ones serially) shares compute, L1 and the caches private to a core among the
threads its launch gets, in equal chunks of iterations: the cores, capped as the
launch is (its `tc.max_threads`, else `analysis/parallel_work`'s cap); shared
caches and DRAM are not split.

`predict_kernel(kernel, machine)` returns an `Estimate`: the time, FLOPs, bytes
loaded and stored, bytes moved in from each level beyond L1, the time each
resource bounds, the `bound` (the resource that bounds most of the time:
`compute`, `L1`, `L2`, ..., `DRAM`) and, where the description has an energy
table, `energy_j` (pJ per flop and per byte at each level). The analysis maps
each kernel of a model's loop module (every function but the entry, which
carries the memory plan's `tc.arena_bytes` or is `@main`) to those facts, and
weighs each by its calls from the entry in the totals. A kernel with an op the
model has no rule for (a call, an accelerator's DMA) gets no time but the reason.

```mlir
func.func @scale(%A: memref<1024xf32>, %B: memref<1024xf32>) {
  %two = arith.constant 2.0 : f32
  %w = arith.constant 16 : index
  loop.for %o = 0 to 64 {
    %base = arith.muli %o, %w : index
    loop.for %l = 0 to 16 vectorized {
      %i = arith.addi %base, %l : index
      %a = memref.load %A[%i] : memref<1024xf32>
      %b = arith.mulf %a, %two : f32
      memref.store %b, %B[%i] : memref<1024xf32>
    }
  }
  func.return
}
```
on a 256-bit machine is 64 x 2 compute slots (a multiply per register of 8
lanes), 64 x 4 L1 accesses (2 loads, 2 stores), and 8 KiB of footprint, which
moves nothing if it fits the L1: bound by L1, 256 / (L1 GB/s / 32 bytes) seconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType, ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue

from tilecraft.analysis.footprint import Accesses, flat_stride, value_bytes
from tilecraft.analysis.framework import Analysis, OpFacts, Result, register_analysis
from tilecraft.analysis.machine import Machine, complete
from tilecraft.analysis.parallel_work import MATH_OP_UNITS, MAX_THREADS_ATTR, loop_work, max_threads
from tilecraft.dialects.loop import AllocOp, ForOp, GuardOp, LoopKind, ViewOp, YieldOp
from tilecraft.analysis.vectorize_legality import DIVISIONS, MAX_LANES, vectorization_blocker

# Ops that cost nothing: they name buffers, end bodies, or become immediates.
_FREE = (AllocOp, ViewOp, YieldOp, scf.YieldOp, memref.SubviewOp, func.ReturnOp)
# Index arithmetic that keeps a lane's index `base + stride * lane` (addresses).
_AFFINE = (arith.AddiOp, arith.SubiOp, arith.MuliOp)
_CASTS = (arith.SIToFPOp, arith.FPToSIOp, arith.ExtFOp, arith.TruncFOp, arith.UIToFPOp, arith.FPToUIOp)


def _control(t: Attribute) -> bool:
    """Indices and conditions: what the integer units compute, beside the FP units."""
    return isinstance(t, IndexType) or (isinstance(t, IntegerType) and t.width.data == 1)


def _fused(op: arith.MulfOp) -> bool:
    """A multiply LLVM contracts into an FMA with the add that is its only use."""
    uses = list(op.result.uses)
    return len(uses) == 1 and isinstance(uses[0].operation, (arith.AddfOp, arith.SubfOp))


@dataclass
class Estimate:
    """What `predict_kernel` predicts for one call of a kernel."""

    predicted_s: float
    flops: int
    bytes: int  # loaded and stored
    bound: str  # the resource that takes most of the time: compute, L1, L2, ..., DRAM
    seconds: dict[str, float]  # the time each resource bounds, summed over the nests
    moved: dict[str, int]  # bytes moved in from each level beyond L1
    energy_j: float | None = None  # where the machine has an energy table
    unknown: str | None = None  # ops without a rule (then the time is of the others only)

    def facts(self) -> dict[str, object]:
        """As an analysis reports it (no time where an op has no rule)."""
        facts: dict[str, object] = {"predicted_s": None if self.unknown else self.predicted_s}
        facts |= {"model_flops": self.flops, "model_bytes": self.bytes}  # (loop-counts has "flops": per run)
        facts |= {f"bytes_{level}": moved for level, moved in self.moved.items()}
        facts["bound"] = self.bound
        if self.energy_j is not None:
            facts["energy_j"] = self.energy_j
        if self.unknown:
            facts["unknown"] = self.unknown
        return facts


# -- counting ------------------------------------------------------------------------


@dataclass
class _Counts:
    """One nest's demand on each resource."""

    slots: float = 0.0  # compute issue slots
    flops: float = 0.0
    accesses: float = 0.0  # load/store instructions
    bytes: float = 0.0  # loaded and stored

    def add(self, other: _Counts) -> None:
        self.slots += other.slots
        self.flops += other.flops
        self.accesses += other.accesses
        self.bytes += other.bytes


class _Kernel:
    """A kernel's loop IR, walked once for its accesses, then nest by nest."""

    def __init__(self, kernel: func.FuncOp, machine: Machine):
        assert machine.vector_bits and machine.line_bytes and machine.caches is not None
        self.machine = machine
        self.vector_bits = machine.vector_bits
        self.memory = Accesses(kernel, machine.line_bytes)
        self.affine: set[SSAValue] = set()  # in the vectorized loop walked: base + stride * lane
        self.unknown: set[str] = set()  # ops without a rule

    # compute and L1 -----------------------------------------------------------------

    def count(self, ops: Iterable[Operation], stack: list[tuple[ForOp | None, float]], vector: tuple[ForOp, int] | None,
              varying: set[SSAValue], counts: _Counts) -> None:  # fmt: skip
        """Add the slots, flops and accesses of `ops`, in the loops `stack` (each
        with how often its body runs; in a vectorized loop, `vector` is that loop
        and its lanes, and its body runs once per group of lanes)."""
        for op in ops:
            if isinstance(op, ForOp):
                self._count_loop(op, stack, vector, varying, counts)
            elif isinstance(op, GuardOp) or (isinstance(op, scf.IfOp) and vector is not None):
                for region in op.regions:  # (in a vectorized loop: both branches, under masks)
                    for inner in region.blocks:
                        self.count(inner.ops, stack, vector, varying, counts)
                if vector is not None and any(v in varying for v in op.operands):
                    varying.update(op.results)
            elif isinstance(op, scf.IfOp):  # the dearer branch
                branches = []
                for region in op.regions:
                    branches.append(_Counts())
                    for inner in region.blocks:
                        self.count(inner.ops, stack, vector, varying, branches[-1])
                counts.add(max(branches, key=lambda c: c.slots + c.accesses))
            elif isinstance(op, (memref.LoadOp, memref.StoreOp)):
                self._count_access(op, self._times(op, stack), vector, varying, counts)
            elif op.dialect_name() not in ("arith", "math"):
                if not isinstance(op, _FREE):
                    self.unknown.add(op.name)
            else:
                self._count_arith(op, self._times(op, stack), vector, varying, counts)

    def _times(self, op: Operation, stack: list[tuple[ForOp | None, float]]) -> float:
        """How often `op` runs once LLVM has hoisted it out of the loops it does not
        depend on (loop-invariant code motion; not a load of a buffer the kernel
        stores to, nor a store)."""
        if isinstance(op, memref.StoreOp) or (isinstance(op, memref.LoadOp) and op.memref in self.memory.stored):
            return stack[-1][1]
        depends = frozenset().union(*(self.memory.loops_of(o) for o in op.operands))
        for loop, times in reversed(stack):
            if loop in depends:
                return times
        return stack[0][1]

    def _count_loop(self, loop: ForOp, stack, vector, varying, counts: _Counts) -> None:
        times = stack[-1][1]
        if vector is None and loop.kind.data == LoopKind.VECTORIZED and vectorization_blocker(loop) is None:
            lanes = min(loop.extent, MAX_LANES)
            groups = -(-loop.extent // lanes)
            self.affine = {loop.var}
            self.count(loop.body.block.ops, [*stack, (loop, times * groups)], (loop, lanes), {loop.var}, counts)
        else:
            self.count(loop.body.block.ops, [*stack, (loop, times * loop.extent)], vector, varying, counts)

    def _registers(self, value_bytes: int, vector: tuple[ForOp, int] | None) -> int:
        """Vector registers one op on every lane of `vector` fills."""
        assert vector is not None
        return max(1, -(-vector[1] * value_bytes * 8 // self.vector_bits))

    def _count_access(self, op, times, vector, varying: set[SSAValue], counts: _Counts) -> None:
        access = self.memory.accesses[op]
        if vector is None:
            counts.accesses += times
            counts.bytes += times * access.element
            return
        loop, lanes = vector
        stride = flat_stride(access, loop)
        if isinstance(op, memref.LoadOp) and stride != 0:
            varying.add(op.res)
        if stride == 0:
            counts.accesses += times  # one scalar for every lane
            counts.bytes += times * access.element
        elif stride == 1:
            counts.accesses += times * self._registers(access.element, vector)
            counts.bytes += times * lanes * access.element
        else:  # a gather or scatter: one element per lane
            counts.accesses += times * lanes
            counts.bytes += times * lanes * access.element

    def _count_arith(self, op: Operation, times, vector, varying: set[SSAValue], counts: _Counts) -> None:
        if all(_control(o.type) for o in op.operands):
            lanes_of = [o for o in op.operands if o in varying]
            if vector is None or not lanes_of:
                return  # address and control arithmetic: on the integer units, beside the FP units
            varying.update(op.results)
            if isinstance(op, _AFFINE) and all(o in self.affine for o in lanes_of):
                if not isinstance(op, arith.MuliOp) or len(lanes_of) == 1:
                    self.affine.update(op.results)  # base + stride * lane: folded into addresses
                    return
            if isinstance(op, DIVISIONS):  # no vector integer division: one per lane
                counts.slots += times * vector[1]
            else:
                counts.slots += times * self._registers(max(value_bytes(o.type) for o in op.operands), vector)
            return
        per_lane = vector is not None and any(o in varying for o in op.operands)
        if per_lane:
            varying.update(op.results)
        width = max((value_bytes(r.type) for r in op.results), default=4)
        slots = times * (self._registers(width, vector) if per_lane else 1)
        lanes = vector[1] if per_lane and vector is not None else 1
        if op.dialect_name() == "math":
            counts.slots += slots * MATH_OP_UNITS
            counts.flops += times * lanes
            return
        floating = any(isinstance(r.type, AnyFloat) for r in op.results) and not isinstance(
            op, (arith.SelectOp, arith.CmpfOp)
        )
        if floating and not isinstance(op, _CASTS):
            counts.flops += times * lanes
            if self.machine.fma and isinstance(op, arith.MulfOp) and _fused(op):
                return  # its add issues both
        counts.slots += slots

    # the levels beyond L1 -------------------------------------------------------------


def _parallel_loop(op: Operation) -> ForOp | None:
    """The loop `loop-outline-parallel` runs on the threads: the outermost parallel one."""
    if isinstance(op, ForOp) and op.kind.data == LoopKind.PARALLEL:
        return op
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                found = _parallel_loop(inner)
                if found is not None:
                    return found
    return None


def _threads(loop: ForOp, cores: int) -> float:
    """How many times faster than one thread the launch of `loop` runs its
    iterations: equal chunks over the threads the launch may use."""
    cap = loop.attributes.get(MAX_THREADS_ATTR)
    limit = cap.value.data if cap is not None else max_threads(loop_work(loop))  # type: ignore[attr-defined]
    threads = max(1, min(cores, loop.extent, limit))
    return loop.extent / -(-loop.extent // threads)


def predict_kernel(kernel: func.FuncOp, machine: Machine | None = None) -> Estimate:
    """The predicted time of one call of `kernel` (a loop-level function) on
    `machine` (default: the host; fields it leaves out are the host's)."""
    machine = complete(machine)
    assert machine.caches is not None and machine.cores and machine.frequency_ghz and machine.fma_per_cycle
    dynamic = next((op for op in kernel.walk() if isinstance(op, ForOp) and not op.is_static), None)
    if dynamic is not None:  # (its trip count is known only when the program runs)
        why = f"a loop to {dynamic.upper.name_hint or 'a run-time bound'}: no size to predict at"  # type: ignore[union-attr]
        return Estimate(0.0, 0, 0, "unknown", {}, {}, None, why)
    walked = _Kernel(kernel, machine)
    levels = machine.level_names
    capacities = [int(c.size_kb * 1024) for c in machine.caches]
    whole = walked.memory.whole()
    slot_rate = machine.fma_per_cycle * machine.frequency_ghz * 1e9
    l1_rate = machine.caches[0].bandwidth_gbs * 1e9 / (machine.vector_bits // 8)  # (vector-wide reads a second)
    rates = [c.bandwidth_gbs * 1e9 for c in machine.caches[1:]] + [machine.bandwidth_gbs * 1e9]
    private = [not c.shared for c in machine.caches[1:]] + [False]
    seconds: Counter[str] = Counter()
    moved: Counter[str] = Counter()
    total = flops = loaded = 0.0
    for op in kernel.body.block.ops:
        counts = _Counts()
        walked.count((op,), [(None, 1.0)], None, set(), counts)
        if counts.accesses == 0 and counts.slots == 0:
            continue
        parallel = _parallel_loop(op)
        speedup = _threads(parallel, machine.cores) if parallel is not None else 1.0
        times = {"compute": counts.slots / slot_rate / speedup, levels[0]: counts.accesses / l1_rate / speedup}
        beyond = sum(whole > c for c in capacities)  # the caches the kernel does not fit: the first ones
        missed = walked.memory.statement_misses(op, capacities[:beyond]) + [0.0] * (len(capacities) - beyond)
        for k in range(len(capacities)):
            moved[levels[k + 1]] += int(missed[k])
            times[levels[k + 1]] = missed[k] / rates[k] / (speedup if private[k] else 1.0)
        bound = max(times, key=times.__getitem__)
        seconds[bound] += times[bound]
        total += times[bound]
        flops += counts.flops
        loaded += counts.bytes
    bound = max(seconds, key=seconds.__getitem__) if seconds else "compute"
    energy = None
    if machine.energy is not None:
        pj = flops * machine.energy.pj_per_flop + loaded * machine.energy.pj_per_byte[levels[0]]
        pj += sum(moved[level] * machine.energy.pj_per_byte[level] for level in levels[1:])
        energy = pj * 1e-12
    unknown = f"no cost rule for {', '.join(sorted(walked.unknown))}" if walked.unknown else None
    per_level = {level: moved[level] for level in levels[1:]}
    return Estimate(total, int(flops), int(loaded), bound, dict(seconds), per_level, energy, unknown)


# -- the analysis ------------------------------------------------------------------------


def entry_function(module: ModuleOp) -> func.FuncOp | None:
    """The model's entry in a loop-level module: the function the memory plan
    annotated (`tc.arena_bytes`), else `@main`, else None (a module of kernels)."""
    functions = [f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration]
    marked = [f for f in functions if "tc.arena_bytes" in f.attributes]
    return marked[0] if marked else next((f for f in functions if f.sym_name.data == "main"), None)


@register_analysis
class CostModel(Analysis):
    """Each kernel's predicted time on a machine (the host unless one is given)."""

    name = "cost-model"
    level = "loop"

    def __init__(self, machine: Machine | None = None):
        self.machine = machine

    def ops(self, module: ModuleOp) -> Iterable[Operation]:
        entry = entry_function(module)
        for f in module.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration and f is not entry:
                yield f

    def run(self, module: ModuleOp, deps: Mapping[str, Result]) -> Result:
        entry = entry_function(module)
        calls = Counter(
            op.callee.root_reference.data for op in entry.walk() if isinstance(op, func.CallOp)
        ) if entry is not None else None  # fmt: skip
        # What map and reduce share, handed to them as a result of this run: the
        # instance keeps nothing between modules.
        shared = Result(self.name, [], {"calls": calls, "machine": complete(self.machine)})
        return super().run(module, {**deps, "cost-model": shared})

    def map(self, op: Operation, deps: Mapping[str, Result]) -> dict[str, object] | None:
        assert isinstance(op, func.FuncOp)
        machine = deps["cost-model"].totals["machine"]
        assert isinstance(machine, Machine)
        return predict_kernel(op, machine).facts()

    def reduce(self, facts: Sequence[OpFacts], deps: Mapping[str, Result]) -> dict[str, object]:
        calls, machine = deps["cost-model"].totals["calls"], deps["cost-model"].totals["machine"]
        assert isinstance(machine, Machine) and (calls is None or isinstance(calls, Counter))
        totals: Counter[str] = Counter()
        for f in facts:
            assert isinstance(f.op, func.FuncOp)
            n = calls.get(f.op.sym_name.data, 0) if calls is not None else 1
            for key, value in f.values.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    totals[key] += value * n
        return dict(totals) | {"machine": machine.name}
