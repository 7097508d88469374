"""Per-kernel timing of a compiled model (like TVM's debug executor).

A model is one native call, so the time of each kernel has to be measured
inside it. `profile` builds an instrumented copy of the model once: the
loop-level module is lowered to the llvm dialect, and after the entry point's
every kernel call (and before the first) goes a call of the external function
`tilecraft_profile_mark(i64 n)`, which is bound to a Python callback that reads
`time.perf_counter_ns()`. An external call may read and write any memory, so
LLVM moves no load or store of a kernel across it, even if it inlines the kernel
into the entry point. A kernel's time is the gap between the marks around it; a
mark costs about a microsecond, which the numbers include.
"""

from __future__ import annotations

import ctypes
import statistics
import time
from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64

MARK = "tilecraft_profile_mark"
_MARK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64)


def instrument(module: ModuleOp, entry: str) -> int:
    """Insert the marks into the llvm-dialect `module`'s function `entry`; returns
    how many kernel calls it brackets."""
    function = next(
        (f for f in module.ops if isinstance(f, llvm.FuncOp) and f.sym_name.data == entry), None
    )
    if function is None:
        raise ValueError(f"the lowered model has no function @{entry}")
    module.body.block.add_op(
        llvm.FuncOp(MARK, llvm.LLVMFunctionType([i64], None), linkage=llvm.LinkageAttr("external"))
    )
    # The kernels are the functions defined here; calls of libc (the arena's
    # aligned_alloc and free) or of the runtime are not kernel calls.
    defined = {f.sym_name.data for f in module.ops if isinstance(f, llvm.FuncOp) and f.body.blocks}
    calls = [
        op for op in function.walk()
        if isinstance(op, llvm.CallOp) and op.callee is not None and op.callee.string_value() in defined
    ]

    def mark(n: int):
        index = llvm.ConstantOp(IntegerAttr(n, i64), i64)
        return [index, llvm.CallOp(MARK, index.result)]

    for n, call in enumerate(calls):
        if n == 0:
            call.parent_block().insert_ops_before(mark(0), call)
        call.parent_block().insert_ops_after(mark(n + 1), call)
    return len(calls)


class Profiler:
    """The instrumented build of one model; `run` times its kernel calls."""

    def __init__(self, module: ModuleOp, entry: str, nargs: int, num_threads: int | None, calls: int):
        from xdsl.dialects import func

        from tilecraft.backends.llvm import jit_module, signatures_of
        from tilecraft.pipelines.loop_to_llvm import lower_to_llvm_dialect

        lowered = lower_to_llvm_dialect(module)
        self.count = instrument(lowered, entry)
        if self.count != calls:
            raise AssertionError(f"@{entry} makes {self.count} kernel calls in the llvm dialect, {calls} before")
        self.stamps: list[int] = []
        self._callback = _MARK_TYPE(lambda n: self.stamps.append(time.perf_counter_ns()))
        import llvmlite.binding as llvm_binding

        llvm_binding.add_symbol(MARK, ctypes.cast(self._callback, ctypes.c_void_p).value)
        signatures = signatures_of([f for f in module.ops if isinstance(f, func.FuncOp)])
        self._jit = jit_module(lowered, signatures, num_threads=num_threads)
        address = self._jit.address(entry)
        self.entry: Callable = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * nargs)(address)

    def run(self, addresses: list[int]) -> list[float]:
        """Seconds of each kernel call of one run."""
        self.stamps.clear()
        self.entry(*addresses)
        stamps = self.stamps
        return [(b - a) * 1e-9 for a, b in zip(stamps, stamps[1:])]


def median_times(runs: list[list[float]]) -> list[float]:
    return [statistics.median(r[n] for r in runs) for n in range(len(runs[0]))] if runs else []
