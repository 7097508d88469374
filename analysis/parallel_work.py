"""How much work one run of a parallel loop does, and how many threads it pays for.

`loop_work(loop)` estimates the cost of one execution of a `loop.for` (all its
iterations) in *work units*: one unit is one scalar arithmetic op or memory
access, or one such op on a full 512-bit vector. The estimate walks the loop
nest once, bottom up:

- a loop multiplies its body by its extent; a vectorized loop by the number of
  vectors its iterations fill (`ceil(extent * widest element bytes / 64)`: what
  `loop-vectorize` makes of it on a 512-bit machine, where a 16-lane f32 loop
  is one instruction per op);
- a `loop.guard` counts its body, an `scf.if` its dearer branch (an upper
  bound: the estimate must not make a loop look cheaper than it is);
- memory accesses and arithmetic on values other than indices count 1; `math`
  ops (exp, tanh, erf...) count `MATH_OP_UNITS`, the polynomial the backend
  expands them into; constants, index arithmetic (folded into addresses by
  LLVM), buffer allocations and views count nothing.

`max_threads(work, thread_cost)` turns that into a thread cap. With `n` threads
a launch takes about `work / n + thread_cost * (n - 1)` (in work units: the
share of each thread plus what each thread beyond the caller adds to the
launch: publishing and joining the launch, the claim of its chunks, the caller
waiting for its last chunk, the cache lines the data moves in); the `n`-th
thread pays while it saves more than it costs, `work / (n - 1) - work / n >
thread_cost`, so the cap is the largest `n` with `n * (n - 1) * thread_cost <=
work`. A loop with less than `2 * thread_cost` of work runs on its caller
alone. `THREAD_COST` is measured, not guessed: `bench/threads.py --calibrate`
times a launch on one thread and on all of them and the rate at which work
units run, and prints the constant (how it was derived is in its docstring).
"""

from __future__ import annotations

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Block, Operation

from tilecraft.dialects.loop import (
    AllocOp,
    ForOp,
    GuardOp,
    LoopKind,
    ViewOp,
    YieldOp,
)

MAX_THREADS_ATTR = "tc.max_threads"
# On a launch whose extent is known only when it runs: an iteration's work over
# a thread's cost, from which the launch computes `max_threads` then.
ITERATION_COST_ATTR = "tc.iteration_cost"
"""The attribute of a `loop.launch` that caps its threads (`loop-outline-parallel`
writes it, `convert-loop-to-llvm` passes it to the runtime's launch)."""

# Work units of a transcendental op: the backend expands exp/tanh/erf/log into a
# polynomial of about this many arithmetic instructions (backends/llvm/mathfuncs.py).
MATH_OP_UNITS = 16
# The bytes of one vector register the estimate assumes (512-bit).
VECTOR_BYTES = 64
# Work units one thread beyond the caller costs a launch, r * c, both measured by
# `bench/threads.py --calibrate` on the 2-vCPU development VM (AMD EPYC, AVX2;
# shared with other work): r = 6,700 units a microsecond, the median single-thread rate of the
# 86 parallel kernels of SqueezeNet-1.1, ShuffleNet-v2, ResNet-18 and MobileNet-v2
# (quartiles 5,700-8,900: half the kernels run within -15% and +33% of it); c =
# 1.1 us, from where two threads first beat one on the launch probe (7,200 units,
# 2.2 us on one thread). A machine with more cores pays more a thread
# (SqueezeNet's, ShuffleNet's and ResNet-50's times at 2 and 16 threads on a
# 16-core Xeon, read with the model above, suggest 5-7 us): rerun the
# calibration there and pass `loop-outline-parallel{thread-cost=...}`.
THREAD_COST = 7400
# No cap is written above this many threads: the estimate is only an estimate,
# and every machine this runs on has fewer cores.
MAX_CAP = 1024

_FREE = (arith.ConstantOp, AllocOp, ViewOp, YieldOp, scf.YieldOp, memref.SubviewOp)


def _element_bytes(loop: ForOp) -> int:
    widest = 4
    for op in loop.walk():
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            mtype = op.memref.type
            assert isinstance(mtype, MemRefType)
            widest = max(widest, (getattr(mtype.element_type, "bitwidth", 32) + 7) // 8)
    return widest


def _op_work(op: Operation) -> int:
    if isinstance(op, ForOp):
        body = _block_work(op.body.block)
        extent = op.extent if op.is_static else 1  # (a run-time extent: at least one iteration's work)
        if op.kind.data == LoopKind.VECTORIZED:
            extent = -(-extent * _element_bytes(op) // VECTOR_BYTES)
        return body * extent
    if isinstance(op, GuardOp):
        return _block_work(op.body.block)
    if isinstance(op, scf.IfOp):
        return max(_block_work(region.block) for region in op.regions if region.blocks)
    if isinstance(op, _FREE):
        return 0
    if op.regions:  # an op of some other dialect with a body: its body, once
        return sum(_block_work(block) for region in op.regions for block in region.blocks)
    if op.results and all(isinstance(r.type, IndexType) for r in op.results):
        return 0  # address arithmetic
    if op.dialect_name() == "math":
        return MATH_OP_UNITS
    return 1


def _block_work(block: Block) -> int:
    return sum(_op_work(op) for op in block.ops)


def loop_work(loop: ForOp) -> int:
    """The estimated work of one run of `loop` (all its iterations), in work units."""
    return _op_work(loop)


def iteration_work(loop: ForOp) -> int:
    """The estimated work of one iteration of `loop` (for a loop whose extent is
    known only when it runs: its launch multiplies by the extent then)."""
    return _block_work(loop.body.block)


def block_work(block: Block) -> int:
    """The estimated work of one run of `block` (a kernel function's body, say)."""
    return _block_work(block)


def max_threads(work: int, thread_cost: int = THREAD_COST) -> int:
    """The most threads a launch of `work` units pays for (the module docstring):
    the largest `n` with `n * (n - 1) * thread_cost <= work`, at least 1 and at
    most `MAX_CAP`."""
    if thread_cost <= 0:
        return MAX_CAP
    n = 1
    while n < MAX_CAP and (n + 1) * n * thread_cost <= work:
        n += 1
    return n
