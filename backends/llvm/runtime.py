"""The parallel runtime: `tilecraft_parallel_launch(task, context)` in LLVM IR.

Lowered parallel loops call `tilecraft_parallel_launch(@task, %ctx)` and leave
the threading to this function, which the backend defines (internal linkage) in
the same LLVM module. `task(ctx, chunk, chunks)` runs the `chunk`-th of
`chunks` balanced, contiguous parts of the loop's iterations (see `parallel.py`);
the runtime decides how many chunks there are and who runs which.

**Dynamic chunks.** A launch splits the loop into `CHUNKS_PER_THREAD` chunks per
thread and hands them out from a shared counter: every thread, the caller
included, runs the same worker loop

```
loop: c = atomicrmw add ptr %next, i64 1 monotonic   ; claim the next chunk
      if c >= chunks: return                         ; none left
      task(ctx, c, chunks); br loop
```

on one launch record `{task, ctx, next}` on the caller's stack. Static halves
made every call wait for the slower thread: on a shared machine, when another
process holds a core, the thread queued behind it finished its half one
scheduler time slice late (kernels of ~1 ms took 8-24 ms). With chunks, the
threads that do run take the work of the one that does not, and a thread that
starts late finds the counter past the end and returns at once. Chunks stay
contiguous ranges, so the vectorized and unrolled code inside is unchanged; a
loop with fewer iterations than chunks gets some empty chunks, which cost one
atomic add and an empty call each. The completion of every chunk is published
by what ends the launch (libgomp's barrier, the pool's count of workers
inside the launch, `pthread_join`), so the counter
needs no ordering of its own (`monotonic`).

Three flavours start the threads:

- **gomp** (the JIT's default when libgomp can be found):
  `GOMP_parallel(worker, &record, threads, 0)` runs the worker loop on every
  thread of libgomp's pool. The pool outlives the call, so a launch costs a few
  microseconds, not a thread creation per call. libgomp is the OpenMP runtime
  GCC uses; it is found on the system or in the wheel of our dependency
  xgboost-cpu, and loaded into the process with `load_library_permanently`.
- **pool** (ahead-of-time code: LLVM IR, objects, shared libraries, saved
  models): a pool of threads of our own, in the module itself (below). It needs
  nothing beyond libc, like pthread, and launches as cheaply as gomp.
- **pthread** (the JIT's fallback when there is no libgomp, and ahead-of-time
  code for an architecture the pool does not know): `pthread_create` for threads
  1..N-1, each running the worker loop, which the caller runs too, then
  `pthread_join`. If a thread cannot be created, the others take its chunks.

**The pool.** Internal globals of the module hold a lock, a generation counter
(the futex word), the launch's `state` (a closed bit and the number of workers
inside the launch), the number of workers asleep, and a pointer to the launch
record. The first launch starts threads 1..N-1 (`tilecraft_pool_start`); each
waits for the generation to change: it looks `SPIN_COUNT` times with `pause`
between looks (libgomp's `GOMP_SPINCOUNT` below, the same count), then counts
itself asleep and sleeps in `futex(FUTEX_WAIT)`. A launch takes the lock,
stores the record (on its stack), opens the state (closed bit clear, nobody
inside), adds one to the generation, wakes the sleepers with `FUTEX_WAKE` only
if any are counted, and runs the worker loop itself. A worker that sees the new
generation joins with a compare-and-swap that adds one to the count if the
launch is still open, runs the worker loop, and leaves (subtracts one). When
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
  launch starts threads again. libgomp's pool hangs there: a child that runs a
  parallel kernel after the parent ran one never returns (JIT models share
  that);
- dlclose and exit: workers run the library's code while they spin or sleep,
  so `emit_shared_library` links with `-z nodelete` and dlclose leaves the
  library mapped; at exit the process ends with its workers spinning or asleep.
  An object linked into a library of the user's needs the same flag;
- a thread that cannot be created is missing from the pool, nothing waits
  for it; with none, launches run on the caller alone.

The JIT keeps gomp: its machine code is freed with its module, and a pool in
it would leave threads in freed code. Why a pool of our own rather than
GOMP_parallel left undefined in the library and resolved against a libgomp the
loader pins first (the "saved: gomp" column below, measured with that build):
it ran as the JIT does, the pool as fast or faster, and the pool keeps a
library self-contained (libc only), safe to fork, and free of a second runtime
to find at load time.

MobileNet-v2 (bench/saved.py: the JIT against the same model saved and loaded
back, also saved with the other runtimes), median ms of 5 rounds of 20 calls, on
the 2-vCPU VM while other jobs shared it (the load average in parentheses; the
JIT's idle figure is ~4.5 ms, and the lead measured 7.3 ms saved with pthread,
idle); "pool, caller waits" is the first version of the pool, whose caller
waited for every worker to check in, as libgomp's barrier does:

| run (load average)      | JIT (gomp) | saved: pool | saved: pthread | saved: gomp |
|-------------------------|-----------:|------------:|---------------:|------------:|
| pool (5.8)              |      21.17 |       13.95 |          24.15 |       21.64 |
| pool (5.9)              |      17.56 |       13.98 |          24.49 |       18.91 |
| pool (5.5)              |      17.90 |       13.03 |          21.57 |       17.29 |
| pool, caller waits (4.4)|      21.65 |       20.68 |          23.34 |       19.45 |
| pool, caller waits (4.6)|      13.86 |       12.41 |          15.12 |       13.57 |
| pool, caller waits (3.7)|      13.37 |       12.90 |          11.92 |       13.12 |

Under load the pool is faster than libgomp's (a launch does not wait for a
worker that has no core); the idle comparison could not be made in this
session (the VM was never idle). A tiny kernel (a 4096-float add, 16 chunks, 2
threads) called 3000 times back to back shows the launch itself, median
microseconds per call: pool 1, gomp 1-2, pthread 20; in a phase when workers
were asleep at every call (load 3, workers spin ~25 us: 1000 `pause` of
~25 ns on this AMD EPYC), the caller-waits pool and gomp both took 55 us per
call (the futex wake-up of a halted vCPU), the pool now 1 (the caller runs the
chunks alone).

The thread count is fixed when the module is built (default: `OMP_NUM_THREADS`,
else the CPUs this process may run on; see `utils/threads.py`),
so it and the chunk count are constants.

**Waiting policy.** After a region libgomp's threads spin before they sleep: by
default 300,000 rounds (about 3 ms by libgomp's own estimate), taking a core
from the serial code that follows or from another process, and a thread that
has spun through its share of the CPU loses the next contest for a core
against a busy process. Sleeping at once (`OMP_WAIT_POLICY=passive`) has the
opposite cost: every launch then wakes a sleeping thread (a futex wake-up,
tens of microseconds on a VM), and a model makes one or more launches per
kernel. `load_libgomp` therefore loads libgomp with a short spin,
`GOMP_SPINCOUNT=SPIN_COUNT`: it bridges most gaps between the kernels of one
model call, and threads sleep soon after the call returns. A longer spin gains
nothing measurable on an idle machine and costs several times the latency on a
busy one: a spinning worker holds the core the caller needs. It does so unless
the user set `OMP_WAIT_POLICY` or `GOMP_SPINCOUNT` (`OMP_WAIT_POLICY=passive`
is a little better on a machine shared with busy processes). libgomp reads
them once, when it is loaded; the variable is removed again afterwards, so
child processes do not inherit it.

MobileNet-v2 (bench/networks.py), untuned, one process per setting, median ms
of `timed` (3 rounds of 20 calls; the range of 2-3 processes), on the idle
2-vCPU VM and with one `while True: pass` process beside it (load);
onnxruntime (2 threads, it spins too) for scale:

| libgomp waiting       | idle      | load      |
|-----------------------|----------:|----------:|
| passive               | 6.3 - 9.5 | 8.4 - 8.7 |
| spin 300              |       5.3 | 9.5 - 11.5|
| spin 1000 (chosen)    | 4.7 - 5.2 | 12.3 - 13.0 |
| spin 10000            | 4.4 - 5.5 | 32 - 39   |
| onnxruntime           |       4.6 | 10.9 - 14.6 |

A spinning thread runs libgomp's code, so libgomp must stay mapped until the
process ends: LLVM unloads the libraries it loaded when the process exits, and
a thread still spinning then jumped into unmapped code (a segfault at exit with
`OMP_WAIT_POLICY=active`). `load_libgomp` pins it with `RTLD_NODELETE`.

When the runtime was written, single kernels compared its chunking and waiting:
Measured on the 2-vCPU development VM, which other jobs shared throughout (load
average 2-4, so "quiet" is not idle); median microseconds per call, the median
of 3-7 runs of each setting (one process per setting, since libgomp reads the
policy once); "load" adds one `while True: pass` process. Kernels: a 4096-float
add in 16 parallel chunks of 256 (launch overhead), a 2M-float multiply-add
(~0.6 ms), the hand-scheduled matmul of bench/matmul.py at 256 and 1024.

| runtime (chunks; libgomp waiting)  | tiny | 2M elem |  mm 256 | mm 1024 |
|------------------------------------|-----:|--------:|--------:|--------:|
| quiet: static halves, spin 300k    |    9 |    2340 |    4090 |   20500 |
| quiet: dynamic, spin 300k          |   11 |     640 |     210 |   25900 |
| quiet: dynamic, spin 10k           |   11 |    1250 |     620 |   21100 |
| quiet: dynamic, spin 1k            |   43 |    1090 |     230 |   18100 |
| quiet: dynamic, passive (chosen)   |   16 |    1050 |     350 |   20000 |
| load: static halves, spin 300k     | 12000|   12000 |   12000 |   38300 |
| load: dynamic, spin 300k           | 6000 |    6440 |    2110 |   42600 |
| load: dynamic, spin 10k            |  384 |    1690 |     790 |   27800 |
| load: dynamic, spin 1k             |   59 |    1240 |     450 |   31300 |
| load: dynamic, passive (chosen)    |   14 |    1230 |     400 |   27400 |

Spinning is what put whole time slices (8 and 12 ms on this kernel) into the
medians; passive waiting removes them and costs the quiet case a few
microseconds per launch (the wake-up). The chunking itself measured neutral
here: in one process, 1, 2, 4 and 8 chunks per thread gave the same medians
within noise, quiet and under load (libgomp's barrier at the end of a region
still waits for a thread that starts late, even one that finds no chunk left;
only a pool of our own could let the caller return without it).
"""

from __future__ import annotations

import ctypes.util
import functools
import glob
import os
import sysconfig
from pathlib import Path

import llvmlite.binding as llvm_binding
from llvmlite import ir

from tilecraft.utils.threads import resolve_threads

PARALLEL_LAUNCH = "tilecraft_parallel_launch"

# Chunks per thread: enough that the threads that run can absorb the share of
# one that is descheduled, few enough that a chunk's claim (an atomic add on a
# contended line, ~50 ns) stays small next to even a tiny kernel.
CHUNKS_PER_THREAD = 8

# How long libgomp's threads spin after a region before they sleep, unless the
# user says otherwise (see the module docstring).
SPIN_COUNT = "1000"

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = ir.PointerType()
_TASK = ir.FunctionType(ir.VoidType(), [_PTR, _I32, _I32])
# What the threads of one launch share: {task, ctx, next chunk}.
_RECORD = ir.LiteralStructType([_PTR, _PTR, _I64])


def libgomp_candidates() -> list[str]:
    """Where libgomp may be: the system's, then the copy in xgboost-cpu's wheel."""
    found = []
    name = ctypes.util.find_library("gomp")
    if name:
        found.append(name)
    found += sorted(glob.glob("/usr/lib/*/libgomp.so.1")) + sorted(
        glob.glob("/usr/lib64/libgomp.so.1")
    )
    site = Path(sysconfig.get_paths()["purelib"])
    found += sorted(str(p) for p in site.glob("xgboost_cpu.libs/libgomp*.so*"))
    found += sorted(str(p) for p in site.glob("xgboost.libs/libgomp*.so*"))
    return found


@functools.cache
def load_libgomp() -> str | None:
    """Load libgomp into this process for the JIT; its path, or None if none loads.

    Unless the user chose a waiting policy, libgomp is loaded with SPIN_COUNT
    (it reads it only then; see the module docstring). If libgomp is already in
    the process, loading it again changes nothing. It is pinned in memory
    (RTLD_NODELETE) so that no thread of its pool runs unmapped code at exit."""
    user_chose = "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ
    if not user_chose:
        os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    try:
        for candidate in libgomp_candidates():
            try:
                ctypes.CDLL(candidate, mode=os.RTLD_GLOBAL | os.RTLD_NODELETE)
                llvm_binding.load_library_permanently(candidate)
            except (OSError, RuntimeError):
                continue
            return candidate
        return None
    finally:
        if not user_chose:
            del os.environ["GOMP_SPINCOUNT"]


def default_flavour() -> str:
    return "gomp" if load_libgomp() is not None else "pthread"


def add_parallel_runtime(module: ir.Module, flavour: str, threads: int | None = None) -> None:
    """Define `tilecraft_parallel_launch` in `module` if the module calls it."""
    try:
        launch = module.get_global(PARALLEL_LAUNCH)
    except KeyError:
        return
    assert isinstance(launch, ir.Function) and launch.is_declaration
    threads = resolve_threads(threads)
    launch.linkage = "internal"
    launch.attributes.add("nounwind")
    worker = _define_worker(module, threads * CHUNKS_PER_THREAD)
    if flavour == "gomp":
        _define_gomp_launch(module, launch, worker, threads)
    elif flavour == "pool" and pool_supported(module.triple):
        _define_pool_launch(module, launch, worker, threads)
    elif flavour in ("pthread", "pool"):
        _define_pthread_launch(module, launch, worker, threads)
    else:
        raise ValueError(
            f"unknown parallel runtime '{flavour}' (expected gomp, pool or pthread)"
        )


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


def _define_worker(module: ir.Module, chunks: int) -> ir.Function:
    """`void tilecraft_parallel_worker(ptr task, ptr ctx, ptr next)`: claim and run
    chunks until none is left (the loop in the module docstring). The caller of a
    pthread launch calls it with the task itself, so that call can be inlined."""
    worker = ir.Function(
        module, ir.FunctionType(ir.VoidType(), [_PTR, _PTR, _PTR]), "tilecraft_parallel_worker"
    )
    worker.linkage = "internal"
    worker.attributes.add("nounwind")
    task, context, next_chunk = worker.args
    entry = worker.append_basic_block("entry")
    claim = worker.append_basic_block("claim")
    run = worker.append_basic_block("run")
    done = worker.append_basic_block("done")

    builder = ir.IRBuilder(entry)
    builder.branch(claim)

    builder.position_at_end(claim)
    chunk = builder.atomic_rmw("add", next_chunk, _I64(1), "monotonic")
    builder.cbranch(builder.icmp_unsigned("<", chunk, _I64(chunks)), run, done)

    builder.position_at_end(run)
    _call_task(builder, task, [context, builder.trunc(chunk, _I32), _I32(chunks)])
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
    task = builder.load(_field(builder, record, 0), typ=_PTR)
    context = builder.load(_field(builder, record, 1), typ=_PTR)
    builder.call(worker, [task, context, _field(builder, record, 2)])
    if isinstance(result, ir.VoidType):
        builder.ret_void()
    else:
        builder.ret(ir.Constant(result, None))
    return entry


def _fill_record(builder: ir.IRBuilder, task: ir.Value, context: ir.Value) -> ir.Value:
    record = _alloca(builder, _RECORD)
    record.align = 8
    builder.store(task, _field(builder, record, 0))
    builder.store(context, _field(builder, record, 1))
    builder.store(_I64(0), _field(builder, record, 2))
    return record


def _define_gomp_launch(
    module: ir.Module, launch: ir.Function, worker: ir.Function, threads: int
) -> None:
    gomp_parallel = _declare(
        module, "GOMP_parallel", ir.FunctionType(ir.VoidType(), [_PTR, _PTR, _I32, _I32])
    )
    trampoline = _define_thread_entry(module, worker, "tilecraft_gomp_trampoline", ir.VoidType())
    builder = ir.IRBuilder(launch.append_basic_block())
    record = _fill_record(builder, *launch.args)
    builder.call(gomp_parallel, [trampoline, record, _I32(threads), _I32(0)])
    builder.ret_void()


def _define_pthread_launch(
    module: ir.Module, launch: ir.Function, worker: ir.Function, threads: int
) -> None:
    pthread_create = _declare(
        module, "pthread_create", ir.FunctionType(_I32, [_PTR, _PTR, _PTR, _PTR])
    )
    pthread_join = _declare(module, "pthread_join", ir.FunctionType(_I32, [_I64, _PTR]))
    thread_main = _define_thread_entry(module, worker, "tilecraft_thread_main", _PTR)

    # Straight-line code per thread: the count is a constant, and small.
    builder = ir.IRBuilder(launch.append_basic_block())
    task, context = launch.args
    record = _fill_record(builder, task, context)
    handles_type = ir.ArrayType(_I64, threads)
    handles = _alloca(builder, handles_type)
    started = []
    for t in range(1, threads):
        handle = builder.gep(handles, [_I32(0), _I32(t)], source_etype=handles_type)
        status = builder.call(
            pthread_create, [handle, ir.Constant(_PTR, None), thread_main, record]
        )
        started.append((builder.icmp_signed("==", status, _I32(0)), handle))
    # The caller works too; if a thread could not start, its chunks run here.
    builder.call(worker, [task, context, _field(builder, record, 2)])
    for ok, handle in started:
        with builder.if_then(ok):
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


# The pool's `state`: this bit while no launch is open for workers to join,
# the bits below it count the workers inside the open launch.
_CLOSED = 1 << 31


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

    def __init__(self, module: ir.Module, threads: int):
        arch = module.triple.split("-")[0]
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
        self.job = _pool_global(module, "job", _PTR, 8)
        self.started = _pool_global(module, "started", _I32, 4)
        self.atfork = _pool_global(module, "atfork", _I32, 4)
        self.syscall = _declare(module, "syscall", ir.FunctionType(_I64, [_I64], var_arg=True))
        self.sched_yield = _declare(module, "sched_yield", ir.FunctionType(_I32, []))
        self.pthread_create = _declare(
            module, "pthread_create", ir.FunctionType(_I32, [_PTR, _PTR, _PTR, _PTR])
        )
        self.pthread_detach = _declare(module, "pthread_detach", ir.FunctionType(_I32, [_I64]))
        self.pthread_atfork = _declare(
            module, "pthread_atfork", ir.FunctionType(_I32, [_PTR, _PTR, _PTR])
        )

    def relax(self, builder: ir.IRBuilder) -> None:
        builder.call(self.relax_intrinsic, self.relax_arguments)

    def spin_or(self, builder: ir.IRBuilder, spins: ir.Value, again, after) -> None:
        """One round of a bounded spin: count it in `spins`, relax, then look again
        (`again`) until SPIN_COUNT rounds have passed, else go on to `after`."""
        count = builder.load(spins, typ=_I32)
        builder.store(builder.add(count, _I32(1)), spins)
        self.relax(builder)
        builder.cbranch(builder.icmp_unsigned("<", count, _I32(int(SPIN_COUNT))), again, after)

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
    builder.store(builder.ptrtoint(thread.args[0], _I32), seen)
    builder.store(_I32(0), spins)
    builder.branch(spin)

    # Look for a new generation, SPIN_COUNT times, then sleep on the futex.
    builder.position_at_end(spin)
    generation = builder.load_atomic(pool.generation, "acquire", 4, typ=_I32)
    new = builder.icmp_unsigned("!=", generation, builder.load(seen, typ=_I32))
    builder.cbranch(new, run, relax)

    builder.position_at_end(relax)
    pool.spin_or(builder, spins, spin, sleep)

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
    builder.branch(spin)

    # A new generation: join the launch if it is still open (compare-and-swap
    # of the count, acquire: then the record is the open launch's), run chunks,
    # leave (release: the caller reads what the chunks wrote). A launch that
    # closed before this worker came needs nothing from it.
    join, joined, leave = (thread.append_basic_block(n) for n in ("join", "joined", "leave"))
    builder.position_at_end(run)
    builder.store(generation, seen)
    builder.store(_I32(0), spins)
    state = builder.load_atomic(pool.state, "monotonic", 4, typ=_I32)
    builder.branch(join)
    builder.position_at_end(join)
    current = builder.phi(_I32)
    current.add_incoming(state, run)
    closed = builder.icmp_unsigned("!=", builder.and_(current, _I32(_CLOSED)), _I32(0))
    try_join = thread.append_basic_block("try_join")
    builder.cbranch(closed, spin, try_join)
    builder.position_at_end(try_join)
    swapped = builder.cmpxchg(pool.state, current, builder.add(current, _I32(1)), "acquire", "monotonic")
    current.add_incoming(builder.extract_value(swapped, 0), try_join)
    builder.cbranch(builder.extract_value(swapped, 1), joined, join)
    builder.position_at_end(joined)
    record = builder.load(pool.job, typ=_PTR)
    task = builder.load(_field(builder, record, 0), typ=_PTR)
    context = builder.load(_field(builder, record, 1), typ=_PTR)
    builder.call(worker, [task, context, _field(builder, record, 2)])
    builder.branch(leave)
    builder.position_at_end(leave)
    builder.atomic_rmw("sub", pool.state, _I32(1), "release")
    builder.branch(spin)
    return thread


def _define_pool_start(module: ir.Module, pool: _Pool, thread: ir.Function) -> ir.Function:
    """`void tilecraft_pool_start()`, under the pool's lock: create threads 1..N-1
    (one that fails to start is missing: the others take its chunks) and,
    once per process image, register `tilecraft_pool_after_fork`."""
    after_fork = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "tilecraft_pool_after_fork")
    after_fork.linkage = "internal"
    builder = ir.IRBuilder(after_fork.append_basic_block())
    # The child of a fork has none of the threads: the next launch starts the
    # pool again. The child runs this before any other code, on its only thread.
    for variable in (pool.started, pool.sleepers, pool.lock):
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
    registered = builder.icmp_unsigned("!=", builder.load(pool.atfork, typ=_I32), _I32(0))
    with builder.if_then(builder.not_(registered)):
        null = ir.Constant(_PTR, None)
        builder.call(pool.pthread_atfork, [null, null, after_fork])
        builder.store(_I32(1), pool.atfork)
    builder.ret_void()
    return start


def _define_pool_launch(
    module: ir.Module, launch: ir.Function, worker: ir.Function, threads: int
) -> None:
    pool = _Pool(module, threads)
    start = _define_pool_start(module, pool, _define_pool_thread(module, pool, worker))
    blocks = ("entry", "alone", "owned", "start", "publish", "wake", "run", "join", "relax",
              "yield", "done")
    entry, alone, owned, start_block, publish, wake, run, join, relax, yield_, done = (
        launch.append_basic_block(n) for n in blocks
    )
    task, context = launch.args
    builder = ir.IRBuilder(entry)
    record = _fill_record(builder, task, context)
    spins = _alloca(builder, _I32)
    builder.store(_I32(0), spins)
    # One launch at a time owns the pool; a launch from another thread while
    # it is busy runs all its chunks on its own thread.
    claim = builder.cmpxchg(pool.lock, _I32(0), _I32(1), "acquire", "monotonic")
    builder.cbranch(builder.extract_value(claim, 1), owned, alone)

    builder.position_at_end(alone)
    builder.call(worker, [task, context, _field(builder, record, 2)])
    builder.ret_void()

    builder.position_at_end(owned)
    started = builder.icmp_unsigned("!=", builder.load(pool.started, typ=_I32), _I32(0))
    builder.cbranch(started, publish, start_block)
    builder.position_at_end(start_block)
    builder.call(start, [])
    builder.branch(publish)

    # Publish the record, open the launch (release: a worker that joins sees
    # the record), then the new generation.
    builder.position_at_end(publish)
    builder.store(record, pool.job)
    builder.store_atomic(_I32(0), pool.state, "release", 4)  # open, nobody inside
    builder.atomic_rmw("add", pool.generation, _I32(1), "seq_cst")
    sleepers = builder.load_atomic(pool.sleepers, "seq_cst", 4, typ=_I32)
    builder.cbranch(builder.icmp_unsigned("!=", sleepers, _I32(0)), wake, run)
    builder.position_at_end(wake)
    pool.futex(builder, _FUTEX_WAKE_PRIVATE, _I64(0x7FFFFFFF))
    builder.branch(run)

    builder.position_at_end(run)
    builder.call(worker, [task, context, _field(builder, record, 2)])
    builder.atomic_rmw("or", pool.state, _I32(_CLOSED), "monotonic")
    builder.branch(join)

    # Closed: no worker joins any more. Every worker inside must be done with
    # the record (on this stack) and its chunk before the launch returns:
    # spin, then yield the core to a worker that has none.
    builder.position_at_end(join)
    state = builder.load_atomic(pool.state, "acquire", 4, typ=_I32)
    builder.cbranch(builder.icmp_unsigned("==", state, _I32(_CLOSED)), done, relax)
    builder.position_at_end(relax)
    pool.spin_or(builder, spins, join, yield_)
    builder.position_at_end(yield_)
    builder.call(pool.sched_yield, [])
    builder.branch(join)

    builder.position_at_end(done)
    builder.store_atomic(_I32(0), pool.lock, "release", 4)
    builder.ret_void()
