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
by what ends the launch (libgomp's barrier, `pthread_join`), so the counter
needs no ordering of its own (`monotonic`).

Two flavours start the threads:

- **gomp** (the JIT's default when libgomp can be found):
  `GOMP_parallel(worker, &record, threads, 0)` runs the worker loop on every
  thread of libgomp's pool. The pool outlives the call, so a launch costs a few
  microseconds, not a thread creation per call. libgomp is the OpenMP runtime
  GCC uses; it is found on the system or in the wheel of our dependency
  xgboost-cpu, and loaded into the process with `load_library_permanently`.
- **pthread** (for shared libraries, and the fallback when there is no libgomp):
  `pthread_create` for threads 1..N-1, each running the worker loop, which the
  caller runs too, then `pthread_join`. If a thread cannot be created, the
  others take its chunks. It needs nothing beyond libc.

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
    elif flavour == "pthread":
        _define_pthread_launch(module, launch, worker, threads)
    else:
        raise ValueError(f"unknown parallel runtime '{flavour}' (expected gomp or pthread)")


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
