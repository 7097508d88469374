"""The parallel runtime: `tilecraft_parallel_launch(task, context)` in LLVM IR.

Lowered parallel loops call `tilecraft_parallel_launch(@task, %ctx)` and leave
the threading to this function, which the backend defines (internal linkage) in
the same LLVM module, in one of two flavours:

- **gomp** (the JIT's default when libgomp can be found): a trampoline run by
  `GOMP_parallel(trampoline, {task, ctx}, threads, 0)` calls
  `task(ctx, omp_get_thread_num(), omp_get_num_threads())` on every thread of
  libgomp's pool. The pool outlives the call, so a launch costs a few
  microseconds, not a thread creation per call. libgomp is the OpenMP runtime
  GCC uses; it is found on the system or in the wheel of our dependency
  xgboost-cpu, and loaded into the process with `load_library_permanently`.
- **pthread** (for shared libraries, and the fallback when there is no libgomp):
  `pthread_create` for threads 1..N-1, thread 0 runs on the caller, then
  `pthread_join`; if a thread cannot be created its share runs on the caller.
  It needs nothing beyond libc.

Either way each thread calls `task(ctx, thread, threads)` exactly once and the
task picks its share of the iterations (see `parallel.py`). The thread count is
fixed when the module is built (default `os.cpu_count()`), so it is a constant.
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

PARALLEL_LAUNCH = "tilecraft_parallel_launch"

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = ir.PointerType()
_TASK = ir.FunctionType(ir.VoidType(), [_PTR, _I32, _I32])


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
    """Load libgomp into this process for the JIT; its path, or None if none loads."""
    for candidate in libgomp_candidates():
        try:
            llvm_binding.load_library_permanently(candidate)
        except RuntimeError:
            continue
        return candidate
    return None


def default_flavour() -> str:
    return "gomp" if load_libgomp() is not None else "pthread"


def add_parallel_runtime(module: ir.Module, flavour: str, threads: int | None = None) -> None:
    """Define `tilecraft_parallel_launch` in `module` if the module calls it."""
    try:
        launch = module.get_global(PARALLEL_LAUNCH)
    except KeyError:
        return
    assert isinstance(launch, ir.Function) and launch.is_declaration
    threads = max(1, threads or os.cpu_count() or 1)
    launch.linkage = "internal"
    launch.attributes.add("nounwind")
    if flavour == "gomp":
        _define_gomp_launch(module, launch, threads)
    elif flavour == "pthread":
        _define_pthread_launch(module, launch, threads)
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


def _call_task(builder: ir.IRBuilder, task: ir.Value, args: list[ir.Value]) -> None:
    # llvmlite calls through a pointer only if it knows the function type, which
    # an opaque `ptr` does not carry; a typed pointer prints as the same `ptr`.
    task.type = _TASK.as_pointer()
    builder.call(task, args)


def _define_gomp_launch(module: ir.Module, launch: ir.Function, threads: int) -> None:
    pair = ir.LiteralStructType([_PTR, _PTR])
    thread_num = _declare(module, "omp_get_thread_num", ir.FunctionType(_I32, []))
    num_threads = _declare(module, "omp_get_num_threads", ir.FunctionType(_I32, []))
    gomp_parallel = _declare(
        module, "GOMP_parallel", ir.FunctionType(ir.VoidType(), [_PTR, _PTR, _I32, _I32])
    )

    trampoline = ir.Function(
        module, ir.FunctionType(ir.VoidType(), [_PTR]), "tilecraft_gomp_trampoline"
    )
    trampoline.linkage = "internal"
    trampoline.attributes.add("nounwind")
    builder = ir.IRBuilder(trampoline.append_basic_block())
    data = trampoline.args[0]
    task = builder.load(builder.gep(data, [_I32(0), _I32(0)], source_etype=pair), typ=_PTR)
    context = builder.load(builder.gep(data, [_I32(0), _I32(1)], source_etype=pair), typ=_PTR)
    _call_task(
        builder, task, [context, builder.call(thread_num, []), builder.call(num_threads, [])]
    )
    builder.ret_void()

    builder = ir.IRBuilder(launch.append_basic_block())
    task, context = launch.args
    data = _alloca(builder, pair)
    builder.store(task, builder.gep(data, [_I32(0), _I32(0)], source_etype=pair))
    builder.store(context, builder.gep(data, [_I32(0), _I32(1)], source_etype=pair))
    builder.call(gomp_parallel, [trampoline, data, _I32(threads), _I32(0)])
    builder.ret_void()


def _define_pthread_launch(module: ir.Module, launch: ir.Function, threads: int) -> None:
    # One record per thread: {task, context, thread, threads}.
    record = ir.LiteralStructType([_PTR, _PTR, _I32, _I32])
    pthread_create = _declare(
        module, "pthread_create", ir.FunctionType(_I32, [_PTR, _PTR, _PTR, _PTR])
    )
    pthread_join = _declare(module, "pthread_join", ir.FunctionType(_I32, [_I64, _PTR]))

    thread_main = ir.Function(module, ir.FunctionType(_PTR, [_PTR]), "tilecraft_thread_main")
    thread_main.linkage = "internal"
    thread_main.attributes.add("nounwind")
    builder = ir.IRBuilder(thread_main.append_basic_block())
    fields = [
        builder.load(
            builder.gep(thread_main.args[0], [_I32(0), _I32(i)], source_etype=record), typ=t
        )
        for i, t in enumerate([_PTR, _PTR, _I32, _I32])
    ]
    _call_task(builder, fields[0], fields[1:])
    builder.ret(ir.Constant(_PTR, None))

    # Straight-line code per thread: the count is a constant, and small.
    builder = ir.IRBuilder(launch.append_basic_block())
    task, context = launch.args
    handles_type = ir.ArrayType(_I64, threads)
    handles = _alloca(builder, handles_type)
    records_type = ir.ArrayType(record, threads)
    records = _alloca(builder, records_type)
    started = []
    for t in range(1, threads):
        slot = builder.gep(records, [_I32(0), _I32(t)], source_etype=records_type)
        for i, value in enumerate([task, context, _I32(t), _I32(threads)]):
            builder.store(value, builder.gep(slot, [_I32(0), _I32(i)], source_etype=record))
        handle = builder.gep(handles, [_I32(0), _I32(t)], source_etype=handles_type)
        status = builder.call(pthread_create, [handle, ir.Constant(_PTR, None), thread_main, slot])
        ok = builder.icmp_signed("==", status, _I32(0))
        with builder.if_then(builder.not_(ok)):
            _call_task(builder, task, [context, _I32(t), _I32(threads)])  # no thread: run it here
        started.append((ok, handle))
    _call_task(builder, task, [context, _I32(0), _I32(threads)])
    for ok, handle in started:
        with builder.if_then(ok):
            builder.call(pthread_join, [builder.load(handle, typ=_I64), ir.Constant(_PTR, None)])
    builder.ret_void()
