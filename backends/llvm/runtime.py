"""The parallel runtime: `tilecraft_parallel_launch(task, context, cap)` in LLVM IR.

Lowered parallel loops call `tilecraft_parallel_launch(@task, %ctx, cap)` and
leave the threading to this function, which the backend defines (internal
linkage) in the same LLVM module. `task(ctx, chunk, chunks)` runs the `chunk`-th
of `chunks` balanced, contiguous parts of the loop's iterations (see
`convert-loop-to-llvm`'s launch lowering); the runtime decides how many chunks
there are and who runs which.

**Thread caps.** `cap` is the most threads the launch may use: what its loop's
work pays for (`tc.max_threads`, decided by `loop-outline-parallel` from
`analysis/parallel_work.py`), `NO_THREAD_CAP` where the loop has none. A launch
runs on `n = min(cap, threads)` threads: `n` of one calls `task(ctx, 0, 1)` on
the caller and returns, without the lock, the record or a wake-up (a launch
capped at one in the IR does not even reach the runtime: it is lowered to a
call of the loop's body); otherwise the loop is split into `n *
CHUNKS_PER_THREAD` chunks and at most `n - 1` workers may join the caller (the
pool's join slots below; the pthread flavour creates `n - 1` threads), and only
`n - 1` sleepers are woken. A small kernel then costs what its loop costs on
one core instead of a launch on every thread of a 16-core machine, each
waiting for the slowest (issue: SqueezeNet took 3.05 ms on 16 threads where it
took 2.80 on 2).

**Dynamic chunks.** A launch splits the loop into `CHUNKS_PER_THREAD` chunks per
thread it runs on and hands them out from a shared counter: every thread, the
caller included, runs the same worker loop

```
loop: c = atomicrmw add ptr %next, i64 1 monotonic   ; claim the next chunk
      if c >= chunks: return                         ; none left
      task(ctx, c, chunks); br loop
```

on one launch record `{task, ctx, next, chunks}` on the caller's stack. Static halves
made every call wait for the slower thread: on a shared machine, when another
process holds a core, the thread queued behind it finished its half one
scheduler time slice late (kernels of ~1 ms took 8-24 ms). With chunks, the
threads that do run take the work of the one that does not, and a thread that
starts late finds the counter past the end and returns at once. Chunks stay
contiguous ranges, so the vectorized and unrolled code inside is unchanged; a
loop with fewer iterations than chunks gets some empty chunks, which cost one
atomic add and an empty call each. The completion of every chunk is published
by what ends the launch (the pool's count of workers inside the launch,
`pthread_join`), so the counter needs no ordering of its own (`monotonic`).

Two flavours start the threads:

- **pool** (the default, on x86-64 and AArch64): a pool of threads of our own
  (below), started by the first launch; a launch costs about a microsecond. The
  JIT's modules share one pool per process (`shared_pool_launch`: JIT code is
  freed with its module, while the pool's threads wait in its code between
  launches), so their `tilecraft_parallel_launch` is a call into it.
  Ahead-of-time code (LLVM IR, objects, shared libraries, saved models) carries
  a pool of its own in the module, so it needs nothing beyond libc.
- **pthread** (other architectures): `pthread_create` for threads 1..N-1, each
  running the worker loop, which the caller runs too, then `pthread_join`. If a
  thread cannot be created, the others take its chunks.

**The pool.** Internal globals of the module hold a lock, a generation counter
(the futex word), the launch's `state` (a closed bit and the number of workers
inside the launch), the number of workers asleep, and a pointer to the launch
record. The first launch starts threads 1..N-1 (`tilecraft_pool_start`); each
waits for the generation to change: it looks `SPIN_COUNT` times with `pause`
between looks (the waiting policy below), then counts
itself asleep and sleeps in `futex(FUTEX_WAIT)`. A launch takes the lock,
stores the record (on its stack), opens the state (closed bit clear, nobody
inside, `n - 1` join slots), adds one to the generation, wakes up to `n - 1`
sleepers with `FUTEX_WAKE` only if any are counted, and runs the worker loop
itself. A worker that sees the new generation joins with a compare-and-swap
that moves one slot to the count inside if the launch is still open and has a
slot left (a full launch is not joined, and does not count as late for the
waiting policy), runs the worker loop, and leaves (subtracts one). When
the caller's worker loop finds no chunk left, it closes the launch (sets the
bit) and waits (spinning, then `sched_yield`) only for the workers inside,
which hold the last chunks; then it unlocks. A worker that comes after the
close (asleep, or descheduled, at the launch) finds the bit set and goes back
to waiting: unlike libgomp's barrier, the caller never waits for a thread that
has not started, and a kernel shorter than a wake-up runs on the caller alone
instead of paying for one. Ordering: opening is a release store after the
record, and a worker's successful compare-and-swap an acquire, so the worker
sees the record of the launch it joined (whichever launch is open then: a
worker never reads the record of one it did not join); leaving is a release,
the caller's look at the state an acquire, so the caller sees all that the
chunks wrote; every change of the state is an atomic operation on one word,
so a join either precedes the close (and is waited for) or fails. A lost
wake-up is impossible: the sleeper increments the sleeper count and then looks
at the generation, the launch increments the generation and then looks at the
sleeper count, all sequentially consistent, so at least one of them sees the
other; and the kernel compares the word again before sleeping. What is
defined and tested (tests/pytest/test_parallel_runtime.py):

- two caller threads (or a task that launches): the lock is taken with a
  compare-and-swap, never waited for; a launch that finds the pool busy runs
  all its chunks on its own thread (correct, serial);
- fork: the first launch registers `pthread_atfork(child=...)`, which in the
  child (one thread, none of the pool's) resets the pool, so the child's next
  launch starts threads again (the JIT's shared pool registers the same reset
  with Python's `os.register_at_fork`). libgomp's pool hangs there: a child
  that runs a parallel kernel after the parent ran one never returns;
- dlclose and exit: workers run the library's code while they spin or sleep,
  so `emit_shared_library` links with `-z nodelete` and dlclose leaves the
  library mapped, and the JIT's shared pool is never freed; at exit the process
  ends with its workers spinning or asleep. An object linked into a library of
  the user's needs the same flag;
- a thread that cannot be created is missing from the pool, nothing waits
  for it; with none, launches run on the caller alone.
- a launch capped at `n` threads splits into `n * CHUNKS_PER_THREAD` chunks
  that at most `n` threads run, the caller among them; capped at one, it runs
  as one chunk on the caller; launches capped below the pool's size, back to
  back with uncapped ones, count exactly.

Why a pool of our own rather than libgomp's (`GOMP_parallel`, which the JIT
used until the pool ran there too): libgomp's barrier at the end of a region
waits for every thread of the team, even one that has no core yet. After an
idle gap (a pause in the caller's program, other work in between) its woken
worker competed for the caller's core, and small kernels ran 2-5x slower for
dozens of calls; under load, a launch waited for a worker queued behind a busy
process. A child of `fork` that ran a parallel kernel after its parent had
hung in libgomp. MobileNet-v2, ShuffleNet-v2 and SqueezeNet-1.1 (bench/
networks.py), untuned, JIT on each runtime in one process, interleaved with
onnxruntime (2 threads) by `bench/timing.py timed` (5 rounds of 10 calls,
median ms; measured 2026-11-24 on the 2-vCPU VM, idle and beside one
`while True: pass` process):

| model          | idle: pool | libgomp | onnxruntime | load: pool | libgomp | onnxruntime |
|----------------|-----------:|--------:|------------:|-----------:|--------:|------------:|
| ShuffleNet-v2  |       3.91 |    5.70 |        2.86 |       5.76 |    8.04 |        8.89 |
| MobileNet-v2   |       4.40 |    4.45 |        3.94 |       8.19 |   11.20 |       12.14 |
| SqueezeNet-1.1 |       3.99 |    4.04 |        3.65 |       7.83 |    9.33 |       11.12 |

A saved model on its own pool ran as the JIT on the shared one (ShuffleNet-v2
3.63 vs 3.72 ms, MobileNet-v2 4.28 vs 4.21), and for ahead-of-time code the
pool replaced `pthread_create` per launch (saved MobileNet-v2 7.3 ms, idle).
A tiny kernel (a 4096-float add, 16 chunks, 2 threads) called 3000 times back
to back shows the launch itself, median microseconds per call: pool 1,
libgomp 1-2, pthread 20.

The thread count is fixed when the module is built (default: `OMP_NUM_THREADS`,
else the CPUs this process may run on; see `utils/threads.py`); the chunk count
follows each launch's cap.

**Waiting policy.** A worker that finds no launch looks again after a
`pause`, then sleeps; how long it looks depends on whether a call of the
module is running. Every function the module exports and does not call itself
(a model's `main`, a kernel built alone) tells the pool when it starts and
returns (`enter`/`exit`, `_bracket_entry_points`): while such a call runs, the
next launch is coming (the model's next parallel kernel), so a worker looks up
to its `budget` times (up to BUSY_SPIN_MAX, a millisecond or two of `pause`s),
giving its core away (`sched_yield`) every BUSY_YIELD looks; otherwise (between
calls) it looks IDLE_SPIN_COUNT times (a few hundred microseconds) and sleeps.
`enter` wakes a sleeping
worker at once (a new generation with no launch open), so it is up by the
model's first parallel kernel rather than woken by it.

Why: with only SPIN_COUNT looks, a worker fell asleep in every serial stretch
between two parallel kernels longer than that (a small single-threaded kernel,
a copy), and the next launch had to wake it. On this VM (a guest with adaptive
halt polling) a wake-up after an idle stretch came after the launch had
closed: counted per model call, ShuffleNet-v2's worker slept 17-26 times and
joined 17-25 of its 54 launches, so the caller ran most kernels alone, and a
compiled model ran either ~2.6 or ~3.8 ms depending on that pattern (the
"bimodal" timings of earlier benchmark runs).

The budget adapts, because spinning is only worth it when the worker gets a
core: a launch the worker joins doubles it; a launch that closed before the
spinning worker saw it (the caller did the work alone: the worker had no core
in time, as on a busy machine) halves it, down to SPIN_COUNT, so on a loaded
machine workers sleep as soon as they did before this policy, and the spinning
does not take the cores the caller and the other processes need. (A fixed
busy spin measured 1.5-1.9x slower than sleeping early beside three busy
processes.)

Why a longer look between calls: with SPIN_COUNT looks there (tens of
microseconds) a program calling a small model in a loop found its worker asleep,
woken by `enter` late on this VM, and the model's calls ran in a slow mode for
dozens of calls: ResNet-18 at 64x64 (24 kernels of 10-200 us), 5 calls after
onnxruntime's call and a 0.3 s pause (`bench/timing.py`'s pattern), median 3.6-4.5
ms against 1.9-2.3 otherwise; with IDLE_SPIN_COUNT 2.2-2.4 ms in every pattern
(4096 looks were not enough: 3.7-4.0 ms). Interleaved with onnxruntime: ResNet-18
64x64 1.82 -> 1.20x its time, SqueezeNet-1.1 112x112 1.54 -> 1.05x, MobileNet-v2
96x96 1.44 -> 1.20x (2026-11-28).

When the runtime was written (on libgomp), single kernels compared static
halves with dynamic chunks: on the shared 2-vCPU VM (load average 2-4), median
microseconds per call of a 2M-float multiply-add and the matmul of
bench/matmul.py at 256, static halves took 2340 and 4090 quiet, 12000 and 12000
beside a busy process (a thread queued behind it finished its half a time slice
late); dynamic chunks 640-1250 and 210-620 quiet, 1240-6440 and 400-2110 under
load. The number of chunks per thread (1 to 8) measured neutral.
"""

from __future__ import annotations

import ctypes
import os

import llvmlite.binding as llvm_binding
from llvmlite import ir

from tilecraft.backends.llvm.target import (
    create_host_target_machine,
    parse_and_optimize,
    triple_and_layout,
)
from tilecraft.backends.llvm.names import NO_THREAD_CAP, PARALLEL_LAUNCH  # noqa: F401 (NO_THREAD_CAP: tests read it here)
from tilecraft.utils.threads import resolve_threads

# Chunks per thread: enough that the threads that run can absorb the share of
# one that is descheduled, few enough that a chunk's claim (an atomic add on a
# contended line, ~50 ns) stays small next to even a tiny kernel.
CHUNKS_PER_THREAD = 8

# How many times a pool worker looks for a launch before it sleeps, and the
# caller for the workers inside a launch before it yields (the waiting policy
# in the module docstring).
SPIN_COUNT = 1000
# How many times a worker looks between calls of the module (no entry point
# running) before it sleeps: a few hundred microseconds, so a program that calls a
# model in a loop finds the worker awake at the next call.
IDLE_SPIN_COUNT = 1 << 14
# While an entry point runs, a waiting worker yields once per this many looks
# (a power of two).
BUSY_YIELD = 1024
# The most looks while an entry point runs (the adaptive budget's ceiling; a
# power of two): a millisecond or two, longer than the serial stretches between
# the parallel kernels of a model.
BUSY_SPIN_MAX = 1 << 16

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = ir.PointerType()
_TASK = ir.FunctionType(ir.VoidType(), [_PTR, _I32, _I32])
_LAUNCH = ir.FunctionType(ir.VoidType(), [_PTR, _PTR, _I32])
_REGION = ir.FunctionType(ir.VoidType(), [])
# What the threads of one launch share: {task, ctx, next chunk, chunks}.
_RECORD = ir.LiteralStructType([_PTR, _PTR, _I64, _I32])


def default_flavour() -> str:
    """The runtime for this CPU: the pool where it knows the architecture."""
    return "pool" if pool_supported(llvm_binding.get_process_triple()) else "pthread"


# The process-wide pools compiled so far, by thread count and chunk count.
_SHARED_POOLS: set[tuple[int, int]] = set()


def shared_pool_launch(threads: int) -> str:
    """The symbol of the process's pool of `threads` threads, compiled on first
    use: `void name(ptr task, ptr context, i32 cap)` launches as
    `tilecraft_parallel_launch`.

    JIT modules call it (their `tilecraft_parallel_launch` is one call), so the
    pool's code and threads outlive every module. `llvm.add_symbol` makes the
    name resolvable when a module is finalized; a child of `os.fork` resets the
    pool (Python's at-fork hook: libc's `pthread_atfork` is not in its dynamic
    symbol table for the JIT to resolve). A child of a fork outside Python still
    computes correctly: the pool's `started` flag is set but no worker runs, so
    every launch runs on the child's thread."""
    chunks = threads * CHUNKS_PER_THREAD
    name = f"tilecraft_pool_launch_{threads}x{chunks}"
    if (threads, chunks) in _SHARED_POOLS:
        return name
    module = ir.Module("tilecraft_shared_pool")
    module.triple, module.data_layout = triple_and_layout()
    launch = ir.Function(module, _LAUNCH, name)
    launch.attributes.add("nounwind")
    pool = _define_pool_launch(module, launch, _define_worker(module), threads, register_atfork=False)
    pool.after_fork.name = f"{name}_after_fork"
    _define_pool_region(module, pool, f"{name}_enter", f"{name}_exit", "external")
    engine = llvm_binding.create_mcjit_compiler(
        parse_and_optimize(str(module)), create_host_target_machine(jit=True)
    )
    engine.finalize_object()
    for symbol in (name, f"{name}_enter", f"{name}_exit"):
        llvm_binding.add_symbol(symbol, engine.get_function_address(symbol))
    reset = ctypes.CFUNCTYPE(None)(engine.get_function_address(pool.after_fork.name))
    os.register_at_fork(after_in_child=reset)
    # The engine owns the machine code; detached, it is never freed (the
    # pool's threads run that code until the process ends).
    engine.detach()
    _SHARED_POOLS.add((threads, chunks))
    return name


def _define_shared_pool_call(module: ir.Module, launch: ir.Function, threads: int, bracket: bool = True) -> None:
    name = shared_pool_launch(threads)
    pool_launch = _declare(module, name, _LAUNCH)
    builder = ir.IRBuilder(launch.append_basic_block())
    builder.call(pool_launch, launch.args)
    builder.ret_void()
    if bracket:
        _bracket_with_shared_pool(module, name)


def _bracket_with_shared_pool(module: ir.Module, name: str) -> None:
    _bracket_entry_points(module, _declare(module, f"{name}_enter", _REGION), _declare(module, f"{name}_exit", _REGION))


def _bracket_entry_points(module: ir.Module, enter: ir.Function, exit_: ir.Function) -> None:
    """Call `enter` first and `exit_` before every return in each function the
    module exports that no function of the module calls (a model's `main`, a
    kernel built alone): the pool's workers keep spinning from one launch to the
    next while such a call runs (the waiting policy in the module docstring)."""
    defined = [f for f in module.functions if not f.is_declaration]
    called = {
        instruction.callee.name
        for f in defined for block in f.blocks for instruction in block.instructions
        if isinstance(instruction, ir.CallInstr) and isinstance(instruction.callee, ir.Function)
    }
    for f in defined:
        if f.linkage not in ("", "external") or f.name in called or f in (enter, exit_):
            continue
        builder = ir.IRBuilder()
        builder.position_at_start(f.entry_basic_block)
        builder.call(enter, [])
        for block in f.blocks:
            if isinstance(block.terminator, ir.Ret):
                builder.position_before(block.terminator)
                builder.call(exit_, [])


def add_parallel_runtime(
    module: ir.Module, flavour: str, threads: int | None = None, entry_points: bool | None = None
) -> None:
    """Define `tilecraft_parallel_launch` in `module` if the module calls it:
    "pool" puts a pool in the module (pthread where the pool does not know the
    architecture), "shared-pool" calls the process's (JIT modules only).

    `entry_points` (shared-pool only): whether the module's entry points are
    bracketed (`_bracket_entry_points`); by default where the module launches.
    A model linked from one object per kernel (compiler.compile_model_module)
    brackets its `main` though it launches nothing itself (True), and not its
    kernels, which `main` calls (False): as one module compiled whole would."""
    try:
        launch = module.get_global(PARALLEL_LAUNCH)
    except KeyError:
        if entry_points and flavour == "shared-pool":
            _bracket_with_shared_pool(module, shared_pool_launch(resolve_threads(threads)))
        return
    assert isinstance(launch, ir.Function) and launch.is_declaration
    threads = resolve_threads(threads)
    launch.linkage = "internal"
    launch.attributes.add("nounwind")
    if flavour == "shared-pool":
        _define_shared_pool_call(module, launch, threads, bracket=entry_points is not False)
        return
    if flavour not in ("pool", "pthread"):
        raise ValueError(
            f"unknown parallel runtime '{flavour}' (expected pool, shared-pool or pthread)"
        )
    worker = _define_worker(module)
    if flavour == "pool" and pool_supported(module.triple):
        pool = _define_pool_launch(module, launch, worker, threads)
        enter, exit_ = _define_pool_region(
            module, pool, "tilecraft_parallel_enter", "tilecraft_parallel_exit", "internal"
        )
        _bracket_entry_points(module, enter, exit_)
    else:
        _define_pthread_launch(module, launch, worker, threads)


def _declare(module: ir.Module, name: str, ftype: ir.FunctionType) -> ir.Function:
    try:
        return module.get_global(name)
    except KeyError:
        return ir.Function(module, ftype, name)


def _alloca(builder: ir.IRBuilder, t: ir.Type) -> ir.Value:
    # llvmlite types an alloca as a typed pointer, and GEPs from it then refuse
    # stores of other types; an opaque pointer is what LLVM has anyway.
    instruction = builder.alloca(t)
    instruction.type = _PTR
    return instruction


def _field(builder: ir.IRBuilder, record: ir.Value, index: int) -> ir.Value:
    return builder.gep(record, [_I32(0), _I32(index)], source_etype=_RECORD)


def _call_task(builder: ir.IRBuilder, task: ir.Value, args: list[ir.Value]) -> None:
    # llvmlite calls through a pointer only if it knows the function type, which
    # an opaque `ptr` does not carry; a typed pointer prints as the same `ptr`.
    task.type = _TASK.as_pointer()
    builder.call(task, args)


def _define_worker(module: ir.Module) -> ir.Function:
    """`void tilecraft_parallel_worker(ptr task, ptr ctx, ptr next, i32 chunks)`:
    claim and run chunks until none is left (the loop in the module docstring).
    The caller of a pthread launch calls it with the task itself, so that call
    can be inlined."""
    worker = ir.Function(
        module, ir.FunctionType(ir.VoidType(), [_PTR, _PTR, _PTR, _I32]), "tilecraft_parallel_worker"
    )
    worker.linkage = "internal"
    worker.attributes.add("nounwind")
    task, context, next_chunk, chunks = worker.args
    entry = worker.append_basic_block("entry")
    claim = worker.append_basic_block("claim")
    run = worker.append_basic_block("run")
    done = worker.append_basic_block("done")

    builder = ir.IRBuilder(entry)
    builder.branch(claim)

    builder.position_at_end(claim)
    chunk = builder.atomic_rmw("add", next_chunk, _I64(1), "monotonic")
    builder.cbranch(builder.icmp_unsigned("<", chunk, builder.zext(chunks, _I64)), run, done)

    builder.position_at_end(run)
    _call_task(builder, task, [context, builder.trunc(chunk, _I32), chunks])
    builder.branch(claim)

    builder.position_at_end(done)
    builder.ret_void()
    return worker


def _define_thread_entry(
    module: ir.Module, worker: ir.Function, name: str, result: ir.Type
) -> ir.Function:
    """`name(ptr record)`: what a thread starts with; runs the worker on the launch
    record. Returns a null `result` (pthread's start routines return a pointer)."""
    entry = ir.Function(module, ir.FunctionType(result, [_PTR]), name)
    entry.linkage = "internal"
    entry.attributes.add("nounwind")
    builder = ir.IRBuilder(entry.append_basic_block())
    record = entry.args[0]
    _run_record(builder, worker, record)
    if isinstance(result, ir.VoidType):
        builder.ret_void()
    else:
        builder.ret(ir.Constant(result, None))
    return entry


def _run_record(builder: ir.IRBuilder, worker: ir.Function, record: ir.Value) -> None:
    """Run the worker loop on the launch `record` (a thread that joins it)."""
    task = builder.load(_field(builder, record, 0), typ=_PTR)
    context = builder.load(_field(builder, record, 1), typ=_PTR)
    chunks = builder.load(_field(builder, record, 3), typ=_I32)
    builder.call(worker, [task, context, _field(builder, record, 2), chunks])


def _alloca_record(builder: ir.IRBuilder) -> ir.Value:
    record = _alloca(builder, _RECORD)
    record.align = 8
    return record


def _fill_record(
    builder: ir.IRBuilder, record: ir.Value, task: ir.Value, context: ir.Value, chunks: ir.Value
) -> None:
    builder.store(task, _field(builder, record, 0))
    builder.store(context, _field(builder, record, 1))
    builder.store(_I64(0), _field(builder, record, 2))
    builder.store(chunks, _field(builder, record, 3))


def _launch_threads(builder: ir.IRBuilder, launch: ir.Function, threads: int) -> tuple[ir.Value, ir.Value]:
    """The start of every launch: the threads it runs on, `min(cap, threads)`, and
    its chunk count; a launch of one thread (or a module of one) runs its loop as
    one chunk on the caller and returns here, without touching the pool."""
    task, context, cap = launch.args
    capped = builder.icmp_unsigned("<", cap, _I32(threads))
    used = builder.select(capped, cap, _I32(threads))
    alone = launch.append_basic_block("inline")
    shared = launch.append_basic_block("shared")
    builder.cbranch(builder.icmp_unsigned("<=", used, _I32(1)), alone, shared)
    builder.position_at_end(alone)
    _call_task(builder, task, [context, _I32(0), _I32(1)])
    builder.ret_void()
    builder.position_at_end(shared)
    return used, builder.mul(used, _I32(CHUNKS_PER_THREAD))


def _define_pthread_launch(
    module: ir.Module, launch: ir.Function, worker: ir.Function, threads: int
) -> None:
    pthread_create = _declare(
        module, "pthread_create", ir.FunctionType(_I32, [_PTR, _PTR, _PTR, _PTR])
    )
    pthread_join = _declare(module, "pthread_join", ir.FunctionType(_I32, [_I64, _PTR]))
    thread_main = _define_thread_entry(module, worker, "tilecraft_thread_main", _PTR)

    # Straight-line code per thread: the count is a constant, and small.
    builder = ir.IRBuilder(launch.append_basic_block("entry"))
    task, context, _ = launch.args
    handles_type = ir.ArrayType(_I64, threads)
    handles = _alloca(builder, handles_type)
    statuses_type = ir.ArrayType(_I32, threads)
    statuses = _alloca(builder, statuses_type)
    record = _alloca_record(builder)
    used, chunks = _launch_threads(builder, launch, threads)
    _fill_record(builder, record, task, context, chunks)
    started = []
    for t in range(1, threads):
        handle = builder.gep(handles, [_I32(0), _I32(t)], source_etype=handles_type)
        status = builder.gep(statuses, [_I32(0), _I32(t)], source_etype=statuses_type)
        builder.store(_I32(1), status)  # not started
        # Threads past the launch's cap are not created.
        with builder.if_then(builder.icmp_unsigned("<", _I32(t), used)):
            created = builder.call(
                pthread_create, [handle, ir.Constant(_PTR, None), thread_main, record]
            )
            builder.store(created, status)
        started.append((status, handle))
    # The caller works too; if a thread could not start, its chunks run here.
    builder.call(worker, [task, context, _field(builder, record, 2), chunks])
    for status, handle in started:
        with builder.if_then(builder.icmp_signed("==", builder.load(status, typ=_I32), _I32(0))):
            builder.call(pthread_join, [builder.load(handle, typ=_I64), ir.Constant(_PTR, None)])
    builder.ret_void()


# -- the pool: persistent threads of our own, for code outside the JIT ---------

# futex(2): the system call's number per architecture, and the two operations
# (process-private: the futex word is never shared between processes).
_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}
_FUTEX_WAIT_PRIVATE, _FUTEX_WAKE_PRIVATE = 128, 129
# What a waiting thread runs between two looks at a shared word: the
# intrinsics of `pause` and of `yield` (hint #1); an intrinsic, not inline
# assembly, which the object emitter could not parse.
_RELAX = {"x86_64": ("llvm.x86.sse2.pause", []), "aarch64": ("llvm.aarch64.hint", [1])}


# The pool's `state`: the top bit while no launch is open for workers to join,
# bits 16-30 the workers that may still join the open launch (its cap's), the
# low 16 bits the workers inside it.
_CLOSED = 1 << 31
_SLOT = 1 << 16
_INSIDE = _SLOT - 1


def pool_supported(triple: str) -> bool:
    return triple.split("-")[0] in _SYS_FUTEX


def _pool_global(module: ir.Module, name: str, typ: ir.Type, align: int) -> ir.GlobalVariable:
    variable = ir.GlobalVariable(module, typ, f"tilecraft_pool_{name}")
    variable.linkage = "internal"
    variable.initializer = ir.Constant(typ, None)
    variable.align = align
    return variable


class _Pool:
    """The pool's state, one set per module (internal globals), and what it calls."""

    def __init__(self, module: ir.Module, threads: int, register_atfork: bool):
        arch = module.triple.split("-")[0]
        self.register_atfork = register_atfork
        self.threads = threads
        self.sys_futex = _SYS_FUTEX[arch]
        name, arguments = _RELAX[arch]
        self.relax_arguments = [_I32(a) for a in arguments]
        self.relax_intrinsic = _declare(
            module, name, ir.FunctionType(ir.VoidType(), [_I32] * len(arguments))
        )
        # The generation and the state change at every launch, and the
        # workers poll them: each on its own cache line.
        self.generation = _pool_global(module, "generation", _I32, 64)
        self.state = _pool_global(module, "state", _I32, 64)
        self.state.initializer = _I32(_CLOSED)
        self.lock = _pool_global(module, "lock", _I32, 64)
        self.sleepers = _pool_global(module, "sleepers", _I32, 4)
        # How many calls of the module's entry points are running (they launch
        # again soon: the workers do not sleep while any is).
        self.active = _pool_global(module, "active", _I32, 64)
        self.after_fork: ir.Function | None = None  # set by _define_pool_start
        self.job = _pool_global(module, "job", _PTR, 8)
        self.started = _pool_global(module, "started", _I32, 4)
        self.atfork = _pool_global(module, "atfork", _I32, 4)
        self.syscall = _declare(module, "syscall", ir.FunctionType(_I64, [_I64], var_arg=True))
        self.sched_yield = _declare(module, "sched_yield", ir.FunctionType(_I32, []))
        self.pthread_create = _declare(
            module, "pthread_create", ir.FunctionType(_I32, [_PTR, _PTR, _PTR, _PTR])
        )
        self.pthread_detach = _declare(module, "pthread_detach", ir.FunctionType(_I32, [_I64]))
        if register_atfork:
            self.pthread_atfork = _declare(
                module, "pthread_atfork", ir.FunctionType(_I32, [_PTR, _PTR, _PTR])
            )

    def relax(self, builder: ir.IRBuilder) -> None:
        builder.call(self.relax_intrinsic, self.relax_arguments)

    def spin_or(self, builder: ir.IRBuilder, spins: ir.Value, again, after, relax: bool = True,
                limit: int = SPIN_COUNT) -> None:  # fmt: skip
        """One round of a bounded spin: count it in `spins`, relax, then look again
        (`again`) until `limit` rounds have passed, else go on to `after`."""
        count = builder.load(spins, typ=_I32)
        builder.store(builder.add(count, _I32(1)), spins)
        if relax:
            self.relax(builder)
        builder.cbranch(builder.icmp_unsigned("<", count, _I32(limit)), again, after)

    def futex(self, builder: ir.IRBuilder, operation: int, value: ir.Value) -> None:
        builder.call(
            self.syscall,
            [_I64(self.sys_futex), self.generation, _I64(operation), value, ir.Constant(_PTR, None)],
        )


def _define_pool_thread(module: ir.Module, pool: _Pool, worker: ir.Function) -> ir.Function:
    """`ptr tilecraft_pool_thread(ptr seen)`: a worker of the pool, forever. `seen`
    is the generation when it was created; every launch adds one to it."""
    thread = ir.Function(module, ir.FunctionType(_PTR, [_PTR]), "tilecraft_pool_thread")
    thread.linkage = "internal"
    thread.attributes.add("nounwind")
    blocks = ("entry", "spin", "relax", "sleep", "wait", "awake", "run")
    entry, spin, relax, sleep, wait, awake, run = (thread.append_basic_block(n) for n in blocks)
    builder = ir.IRBuilder(entry)
    seen = _alloca(builder, _I32)
    spins = _alloca(builder, _I32)
    budget = _alloca(builder, _I32)  # looks while an entry point runs, before a sleep
    woke = _alloca(builder, _I32)  # 1 from a wake-up to the next generation
    builder.store(builder.ptrtoint(thread.args[0], _I32), seen)
    builder.store(_I32(0), spins)
    builder.store(_I32(BUSY_SPIN_MAX), budget)
    builder.store(_I32(0), woke)
    builder.branch(spin)

    # Look for a new generation, SPIN_COUNT times, then sleep on the futex.
    builder.position_at_end(spin)
    generation = builder.load_atomic(pool.generation, "acquire", 4, typ=_I32)
    new = builder.icmp_unsigned("!=", generation, builder.load(seen, typ=_I32))
    builder.cbranch(new, run, relax)

    # While an entry point runs, the next launch comes soon: look up to `budget`
    # times (yielding now and then to a thread that waits for this core); else
    # SPIN_COUNT times. Then sleep.
    blocks = ("busy", "busy_look", "give_way", "idle")
    busy, busy_look, give_way, idle = (thread.append_basic_block(n) for n in blocks)
    builder.position_at_end(relax)
    pool.relax(builder)
    running = builder.load_atomic(pool.active, "monotonic", 4, typ=_I32)
    builder.cbranch(builder.icmp_unsigned("!=", running, _I32(0)), busy, idle)
    builder.position_at_end(busy)
    count = builder.add(builder.load(spins, typ=_I32), _I32(1))
    builder.store(count, spins)
    builder.cbranch(builder.icmp_unsigned("<", count, builder.load(budget, typ=_I32)), busy_look, sleep)
    builder.position_at_end(busy_look)
    turn = builder.and_(count, _I32(BUSY_YIELD - 1))
    builder.cbranch(builder.icmp_unsigned("==", turn, _I32(0)), give_way, spin)
    builder.position_at_end(give_way)
    builder.call(pool.sched_yield, [])
    builder.branch(spin)
    builder.position_at_end(idle)
    pool.spin_or(builder, spins, spin, sleep, relax=False, limit=IDLE_SPIN_COUNT)

    # Announce the sleep before the last look (both sequentially consistent):
    # either the launch sees a sleeper and wakes it, or this look sees the
    # launch. The kernel compares the word again, so no wake-up is lost.
    builder.position_at_end(sleep)
    builder.atomic_rmw("add", pool.sleepers, _I32(1), "seq_cst")
    last_look = builder.load_atomic(pool.generation, "seq_cst", 4, typ=_I32)
    same = builder.icmp_unsigned("==", last_look, builder.load(seen, typ=_I32))
    builder.cbranch(same, wait, awake)

    builder.position_at_end(wait)
    pool.futex(builder, _FUTEX_WAIT_PRIVATE, builder.zext(builder.load(seen, typ=_I32), _I64))
    builder.branch(awake)

    # Awake (or never asleep): look again; `spins` is past the count, so one
    # look that finds nothing sleeps again (a spurious wake-up costs one look).
    builder.position_at_end(awake)
    builder.atomic_rmw("sub", pool.sleepers, _I32(1), "seq_cst")
    builder.store(_I32(1), woke)
    builder.branch(spin)

    # A new generation: join the launch if it is still open and has a free slot
    # (compare-and-swap that moves one slot to the count inside, acquire: then
    # the record is the open launch's), run chunks, leave (release: the caller
    # reads what the chunks wrote). A launch that closed before this worker
    # came needs nothing from it; one its cap has filled, nothing either.
    join, joined, leave, late = (thread.append_basic_block(n) for n in ("join", "joined", "leave", "late"))
    builder.position_at_end(run)
    builder.store(generation, seen)
    builder.store(_I32(0), spins)
    state = builder.load_atomic(pool.state, "monotonic", 4, typ=_I32)
    builder.branch(join)
    builder.position_at_end(join)
    current = builder.phi(_I32)
    current.add_incoming(state, run)
    closed = builder.icmp_unsigned("!=", builder.and_(current, _I32(_CLOSED)), _I32(0))
    open_, try_join, full = (thread.append_basic_block(n) for n in ("open", "try_join", "full"))
    builder.cbranch(closed, late, open_)
    builder.position_at_end(open_)
    no_slot = builder.icmp_unsigned("<", current, _I32(_SLOT))
    builder.cbranch(no_slot, full, try_join)
    builder.position_at_end(try_join)
    entered = builder.add(current, _I32(1 - _SLOT))
    swapped = builder.cmpxchg(pool.state, current, entered, "acquire", "monotonic")
    current.add_incoming(builder.extract_value(swapped, 0), try_join)
    builder.cbranch(builder.extract_value(swapped, 1), joined, join)
    # The budget adapts: a launch joined doubles it (looking found work), one
    # that closed before this worker, spinning, saw it halves it (the caller did
    # the work alone: under load this thread had no core, and its spinning only
    # takes cores from others). A launch missed while asleep says nothing.
    builder.position_at_end(late)
    lower = builder.icmp_unsigned("==", builder.load(woke, typ=_I32), _I32(0))
    current_budget = builder.load(budget, typ=_I32)
    halved = builder.lshr(current_budget, _I32(1))
    halved = builder.select(builder.icmp_unsigned("<", halved, _I32(SPIN_COUNT)), _I32(SPIN_COUNT), halved)
    builder.store(builder.select(lower, halved, current_budget), budget)
    builder.store(_I32(0), woke)
    builder.branch(spin)

    # A launch its cap keeps this worker out of: not late, so the budget stays.
    builder.position_at_end(full)
    builder.store(_I32(0), woke)
    builder.branch(spin)

    builder.position_at_end(joined)
    doubled = builder.shl(builder.load(budget, typ=_I32), _I32(1))
    doubled = builder.select(builder.icmp_unsigned(">", doubled, _I32(BUSY_SPIN_MAX)), _I32(BUSY_SPIN_MAX), doubled)
    builder.store(doubled, budget)
    builder.store(_I32(0), woke)
    _run_record(builder, worker, builder.load(pool.job, typ=_PTR))
    builder.branch(leave)
    builder.position_at_end(leave)
    builder.atomic_rmw("sub", pool.state, _I32(1), "release")
    builder.branch(spin)
    return thread


def _define_pool_start(
    module: ir.Module, pool: _Pool, thread: ir.Function
) -> tuple[ir.Function, ir.Function]:
    """`void tilecraft_pool_start()`, under the pool's lock: create threads 1..N-1
    (one that fails to start is missing: the others take its chunks) and,
    once per process image, register `tilecraft_pool_after_fork` (unless the
    pool's owner registers it: the shared pool's is exported). Both functions."""
    after_fork = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "tilecraft_pool_after_fork")
    after_fork.linkage = "internal" if pool.register_atfork else "external"
    builder = ir.IRBuilder(after_fork.append_basic_block())
    # The child of a fork has none of the threads: the next launch starts the
    # pool again. The child runs this before any other code, on its only thread.
    for variable in (pool.started, pool.sleepers, pool.lock, pool.active):
        builder.store(_I32(0), variable)
    builder.store(_I32(_CLOSED), pool.state)
    builder.ret_void()

    start = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "tilecraft_pool_start")
    start.linkage = "internal"
    start.attributes.add("noinline")
    start.attributes.add("cold")
    builder = ir.IRBuilder(start.append_basic_block())
    handle = _alloca(builder, _I64)
    generation = builder.load(pool.generation, typ=_I32)
    seen = builder.inttoptr(builder.zext(generation, _I64), _PTR)
    for _ in range(1, pool.threads):
        status = builder.call(pool.pthread_create, [handle, ir.Constant(_PTR, None), thread, seen])
        with builder.if_then(builder.icmp_signed("==", status, _I32(0))):
            builder.call(pool.pthread_detach, [builder.load(handle, typ=_I64)])
    builder.store(_I32(1), pool.started)
    if pool.register_atfork:
        registered = builder.icmp_unsigned("!=", builder.load(pool.atfork, typ=_I32), _I32(0))
        with builder.if_then(builder.not_(registered)):
            null = ir.Constant(_PTR, None)
            builder.call(pool.pthread_atfork, [null, null, after_fork])
            builder.store(_I32(1), pool.atfork)
    builder.ret_void()
    return start, after_fork


def _define_pool_launch(
    module: ir.Module,
    launch: ir.Function,
    worker: ir.Function,
    threads: int,
    register_atfork: bool = True,
) -> _Pool:
    """The pool's launch as `launch`; returns the pool (its `after_fork` reset set)."""
    pool = _Pool(module, threads, register_atfork)
    start, pool.after_fork = _define_pool_start(module, pool, _define_pool_thread(module, pool, worker))
    blocks = ("entry", "alone", "owned", "start", "publish", "wake", "run", "join", "relax",
              "yield", "done")
    entry, alone, owned, start_block, publish, wake, run, join, relax, yield_, done = (
        launch.append_basic_block(n) for n in blocks
    )
    task, context, _ = launch.args
    builder = ir.IRBuilder(entry)
    record = _alloca_record(builder)
    spins = _alloca(builder, _I32)
    used, chunks = _launch_threads(builder, launch, threads)
    _fill_record(builder, record, task, context, chunks)
    builder.store(_I32(0), spins)
    # One launch at a time owns the pool; a launch from another thread while
    # it is busy runs its loop on its own thread, as one chunk.
    claim = builder.cmpxchg(pool.lock, _I32(0), _I32(1), "acquire", "monotonic")
    builder.cbranch(builder.extract_value(claim, 1), owned, alone)

    builder.position_at_end(alone)
    _call_task(builder, task, [context, _I32(0), _I32(1)])
    builder.ret_void()

    builder.position_at_end(owned)
    started = builder.icmp_unsigned("!=", builder.load(pool.started, typ=_I32), _I32(0))
    builder.cbranch(started, publish, start_block)
    builder.position_at_end(start_block)
    builder.call(start, [])
    builder.branch(publish)

    # Publish the record, open the launch with a slot for each thread but the
    # caller (release: a worker that joins sees the record), then the new
    # generation; wake as many sleepers as there are slots.
    builder.position_at_end(publish)
    builder.store(record, pool.job)
    slots = builder.sub(used, _I32(1))
    builder.store_atomic(builder.mul(slots, _I32(_SLOT)), pool.state, "release", 4)  # open, nobody inside
    builder.atomic_rmw("add", pool.generation, _I32(1), "seq_cst")
    sleepers = builder.load_atomic(pool.sleepers, "seq_cst", 4, typ=_I32)
    builder.cbranch(builder.icmp_unsigned("!=", sleepers, _I32(0)), wake, run)
    builder.position_at_end(wake)
    pool.futex(builder, _FUTEX_WAKE_PRIVATE, builder.zext(slots, _I64))
    builder.branch(run)

    builder.position_at_end(run)
    builder.call(worker, [task, context, _field(builder, record, 2), chunks])
    builder.atomic_rmw("or", pool.state, _I32(_CLOSED), "monotonic")
    builder.branch(join)

    # Closed: no worker joins any more. Every worker inside must be done with
    # the record (on this stack) and its chunk before the launch returns:
    # spin, then yield the core to a worker that has none.
    builder.position_at_end(join)
    state = builder.load_atomic(pool.state, "acquire", 4, typ=_I32)
    inside = builder.and_(state, _I32(_INSIDE))
    builder.cbranch(builder.icmp_unsigned("==", inside, _I32(0)), done, relax)
    builder.position_at_end(relax)
    pool.spin_or(builder, spins, join, yield_)
    builder.position_at_end(yield_)
    builder.call(pool.sched_yield, [])
    builder.branch(join)

    builder.position_at_end(done)
    builder.store_atomic(_I32(0), pool.lock, "release", 4)
    builder.ret_void()
    return pool


def _define_pool_region(
    module: ir.Module, pool: _Pool, enter_name: str, exit_name: str, linkage: str
) -> tuple[ir.Function, ir.Function]:
    """`enter()` and `exit()` of an entry point's call (`_bracket_entry_points`).
    Enter counts the call and, if a worker sleeps, starts a new generation and
    wakes it: the worker is up by the first launch instead of woken by it
    (a generation without a launch is one the worker finds closed). Both are
    sequentially consistent against the sleeper's count-then-look, as a launch is."""
    enter = ir.Function(module, _REGION, enter_name)
    exit_ = ir.Function(module, _REGION, exit_name)
    for f in (enter, exit_):
        f.linkage = linkage
        f.attributes.add("nounwind")
    builder = ir.IRBuilder(enter.append_basic_block())
    builder.atomic_rmw("add", pool.active, _I32(1), "seq_cst")
    sleepers = builder.load_atomic(pool.sleepers, "seq_cst", 4, typ=_I32)
    with builder.if_then(builder.icmp_unsigned("!=", sleepers, _I32(0))):
        builder.atomic_rmw("add", pool.generation, _I32(1), "seq_cst")
        pool.futex(builder, _FUTEX_WAKE_PRIVATE, _I64(0x7FFFFFFF))
    builder.ret_void()
    builder = ir.IRBuilder(exit_.append_basic_block())
    builder.atomic_rmw("sub", pool.active, _I32(1), "release")
    builder.ret_void()
    return enter, exit_
