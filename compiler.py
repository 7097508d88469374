"""The compile pipeline as Python functions: parse, lower te to loops, build with LLVM.

Tools (`tilecraft-run`, `tilecraft-translate`) and the Python API (`tilecraft.lower`,
`tilecraft.build`) all go through these, so every entry point runs the same passes.
"""

from __future__ import annotations

from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from tilecraft.utils.diagnostics import LocatedParser, verify_module


def make_context() -> Context:
    """A context with xDSL's dialects, tilecraft's and plugins' registered (lazily)."""
    from tilecraft.registry import get_multiverse

    ctx = Context()
    for name, factory in get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


def parse_text(text: str, file_name: str = "<string>") -> ModuleOp:
    """Parse and verify IR text; errors raise `ParseError` or `OpError` (file:line:col)."""
    module = LocatedParser(make_context(), text, file_name).parse_module()
    verify_module(module)
    return module


def parse_file(path: str | Path) -> ModuleOp:
    return parse_text(Path(path).read_text(), str(path))


def has_te(module: ModuleOp) -> bool:
    from tilecraft.dialects.te import ComputeOp

    return any(isinstance(op, ComputeOp) for op in module.walk())


def lower_to_loops(module: ModuleOp) -> ModuleOp:
    """te + sched -> loop in place, verifying after each pass (the te stages of
    compile-model: `pipelines.compile_model.lower_te_stages`); returns `module`."""
    from tilecraft.pipelines.compile_model import lower_te_stages

    ctx = make_context()
    for stage in lower_te_stages():
        stage().apply(ctx, module)
        verify_module(module)
    return module


# -- loop IR to native code ------------------------------------------------------------
# The LLVM backend takes the llvm dialect; these lower a loop-level module with the
# loop-to-llvm pipeline first (the caller's module stays as it was).


def compile_loop_module(module: ModuleOp, *, num_threads: int | None = None, runtime: str | None = None):
    """JIT-compile every function of a loop-level module for this CPU (a
    `JitModule`: `jit[name]` is called with numpy arrays). `num_threads` defaults
    to `OMP_NUM_THREADS`, else the CPUs this process may run on."""
    import time

    from xdsl.dialects import func

    from tilecraft.backends.llvm.compile import CompileTimes
    from tilecraft.backends.llvm.jit import jit_module, signatures_of
    from tilecraft.lowering.loop_to_llvm import lower_to_llvm_dialect

    from tilecraft.utils.compile_timing import section

    check_argument_types(module)
    times = CompileTimes()
    start = time.perf_counter()
    with section("loop-to-llvm"):
        lowered = lower_to_llvm_dialect(module)
    times.lower = time.perf_counter() - start
    signatures = signatures_of([op for op in module.ops if isinstance(op, func.FuncOp)])
    with section("LLVM"):
        return jit_module(lowered, signatures, num_threads=num_threads, runtime=runtime, times=times)


def check_argument_types(module: ModuleOp) -> None:
    """Every buffer argument of a public function holds elements numpy has a
    dtype for (the JIT passes numpy arrays): an `OpError` at the function if not."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import MemRefType

    from tilecraft.utils.diagnostics import OpError
    from tilecraft.utils.dtypes import numpy_dtype

    for f in module.ops:
        if not isinstance(f, func.FuncOp) or f.is_declaration or f.sym_visibility is not None:
            continue
        for n, t in enumerate(f.function_type.inputs.data):
            if not isinstance(t, MemRefType):
                continue
            try:
                numpy_dtype(t)
            except ValueError:
                raise OpError(
                    f,
                    f"argument #{n + 1} of @{f.sym_name.data} holds {t.get_element_type()}, which "
                    "numpy has no dtype for; tilecraft runs arrays of f16, f32, f64, i1 and "
                    "8- to 64-bit integers",
                ) from None


def emit_llvm_ir(module: ModuleOp, optimize: bool = True, num_threads: int | None = None) -> str:
    """A loop-level (or llvm-dialect) module as LLVM IR text, after O3 unless not `optimize`."""
    from tilecraft.backends import llvm as backend
    from tilecraft.lowering.loop_to_llvm import lower_to_llvm_dialect

    return backend.emit_llvm_ir(lower_to_llvm_dialect(module), optimize, num_threads)


def emit_assembly(module: ModuleOp, num_threads: int | None = None) -> str:
    from tilecraft.backends import llvm as backend
    from tilecraft.lowering.loop_to_llvm import lower_to_llvm_dialect

    return backend.emit_assembly(lower_to_llvm_dialect(module), num_threads)


def emit_object(module: ModuleOp, num_threads: int | None = None) -> bytes:
    from tilecraft.backends import llvm as backend
    from tilecraft.lowering.loop_to_llvm import lower_to_llvm_dialect

    return backend.emit_object(lower_to_llvm_dialect(module), num_threads)


def emit_shared_library(
    module: ModuleOp,
    path: str | Path,
    num_threads: int | None = None,
    constants: dict[str, int] | None = None,
) -> None:
    """The module as the shared library `path`. Each of `constants` (name -> a
    64-bit unsigned value) becomes an exported function `uint64_t name(void)`
    returning it: a saved model records what it was compiled for that way."""
    from tilecraft.backends import llvm as backend
    from tilecraft.lowering.loop_to_llvm import lower_to_llvm_dialect

    lowered = lower_to_llvm_dialect(module)
    for name, value in (constants or {}).items():
        lowered.body.block.add_op(_constant_function(name, value))
    backend.emit_shared_library(lowered, path, num_threads)


def _constant_function(name: str, value: int):
    """`llvm.func @name() -> i64 { return value }` (value in [0, 2**64))."""
    from xdsl.dialects import llvm
    from xdsl.dialects.builtin import IntegerAttr, i64
    from xdsl.ir import Block, Region

    signed = value - (1 << 64) if value >= 1 << 63 else value
    constant = llvm.ConstantOp(IntegerAttr(signed, i64), i64)
    body = Region(Block([constant, llvm.ReturnOp(constant.result)]))
    return llvm.FuncOp(name, llvm.LLVMFunctionType([], i64), linkage=llvm.LinkageAttr("external"), body=body)
