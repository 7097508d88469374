"""What the machine gives a measurement: the FMA ceiling, and whether the cores are
really there right now.

A virtual machine's vCPUs are threads of its host. Measured here (2 vCPUs), in
stretches of a tenth of a second to a few seconds, about one in ten, two threads
each running a serial kernel took exactly twice as long as one thread alone: the
host ran both vCPUs on one core. A parallel kernel then runs at half speed while
a serial one does not notice, and a whole measurement (5 repeats of 10 ms) fits
in such a stretch: the same conv config measured 108 and 197 GFLOP/s in two jobs
a second apart, which is noise no median of repeats removes, and which made the
tuner rank noise. `cores_shared()` asks the machine: it times a loop of fused
multiply-adds on one thread, then on every thread at once; if the threads take
much longer than one alone, the cores are shared at that moment, and
templates.measure takes that repeat again a little later.

The loop is also what bench/tuning.py reports as the machine's FMA ceiling
(`fma_gflops`): 12 independent chains of 16-lane fp32 fused multiply-adds, enough
to cover the latency of the unit.
"""

from __future__ import annotations

import ctypes
import functools
import threading
import time

# Threads at once slower than this many times one thread alone: the cores are shared.
SHARED_SLOWDOWN = 1.5
# How long one probe's loop runs (seconds): longer than the timer's noise, short
# next to a repeat of a measurement.
PROBE_SECONDS = 0.001

_CHAINS, _LANES = 12, 16


@functools.cache
def _fma_loop():
    """`float fma_loop(i64 n, float v)`: n rounds of _CHAINS independent 16-lane FMAs."""
    import llvmlite.binding as llvm

    from tilecraft.backends.llvm.target import create_host_target_machine

    machine = create_host_target_machine(jit=True)  # (initializes LLVM first)
    vec = f"<{_LANES} x float>"
    lines = [f"declare {vec} @llvm.fma.v{_LANES}f32({vec}, {vec}, {vec})",
             "define float @fma_loop(i64 %n, float %v) {", "entry:",
             f"  %e = insertelement {vec} undef, float %v, i32 0",
             f"  %x = shufflevector {vec} %e, {vec} undef, <{_LANES} x i32> zeroinitializer",
             "  br label %loop", "loop:", "  %i = phi i64 [0, %entry], [%j, %loop]"]  # fmt: skip
    lines += [f"  %a{c} = phi {vec} [zeroinitializer, %entry], [%b{c}, %loop]" for c in range(_CHAINS)]
    lines += [f"  %b{c} = call {vec} @llvm.fma.v{_LANES}f32({vec} %a{c}, {vec} %x, {vec} %x)" for c in range(_CHAINS)]
    lines += ["  %j = add i64 %i, 1", "  %more = icmp slt i64 %j, %n", "  br i1 %more, label %loop, label %done",
              "done:", f"  %s0 = fadd {vec} %b0, %b0"]  # fmt: skip
    lines += [f"  %s{c} = fadd {vec} %s{c - 1}, %b{c}" for c in range(1, _CHAINS)]
    lines += [f"  %r = extractelement {vec} %s{_CHAINS - 1}, i32 0", "  ret float %r", "}"]
    module = llvm.parse_assembly("\n".join(lines))
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    address = engine.get_function_address("fma_loop")
    # (ctypes releases the GIL around the call: Python threads run it in parallel)
    run = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_int64, ctypes.c_float)(address)
    return engine, run


def _timed(n: int) -> float:
    _, run = _fma_loop()
    begin = time.perf_counter()
    run(n, 1e-9)
    return time.perf_counter() - begin


def fma_gflops(seconds: float = 1.0) -> float:
    """GFLOP/s of one thread running the loop: the fastest of `seconds` of calls of
    about 20 ms (a busy machine's other work slows some)."""
    n = 1 << 16
    while _timed(n) < 0.02:
        n *= 2
    best, end = 0.0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        best = max(best, n * _CHAINS * _LANES * 2 / _timed(n) / 1e9)
    return best


@functools.cache
def _probe() -> tuple[int, float]:
    """Rounds of the loop that take about PROBE_SECONDS on one thread, and the
    fastest of a few such runs (what a thread alone takes)."""
    n = 1 << 10
    while _timed(n) < PROBE_SECONDS and n < 1 << 30:
        n *= 2
    return n, min(_timed(n) for _ in range(5))


def cores_shared(threads: int | None = None) -> bool:
    """Whether `threads` threads (default: the parallel runtime's) running the loop
    at once each take more than SHARED_SLOWDOWN times what one thread alone takes:
    the host (or another process) gives this process fewer cores than it has
    threads, right now. Always False for one thread."""
    from tilecraft.utils.threads import resolve_threads

    threads = resolve_threads(threads)
    if threads < 2:
        return False
    n, alone = _probe()
    start = threading.Barrier(threads)
    times = [0.0] * threads

    def one(k: int) -> None:
        start.wait()
        times[k] = _timed(n)

    helpers = [threading.Thread(target=one, args=(k,)) for k in range(1, threads)]
    for h in helpers:
        h.start()
    one(0)
    for h in helpers:
        h.join()
    return max(times) > SHARED_SLOWDOWN * alone
