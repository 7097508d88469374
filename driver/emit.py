"""A loop-level module as LLVM IR, assembly, an object file or a shared library.

The LLVM backend takes the llvm dialect: these lower the module with the
loop-to-llvm pipeline first (the caller's module stays as it was).
"""

from __future__ import annotations

from pathlib import Path

from xdsl.dialects.builtin import ModuleOp


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
    from tilecraft.pipelines.loop_to_llvm import lower_to_llvm_dialect

    return backend.emit_llvm_ir(lower_to_llvm_dialect(module), optimize, num_threads)


def emit_assembly(module: ModuleOp, num_threads: int | None = None) -> str:
    from tilecraft.backends import llvm as backend
    from tilecraft.pipelines.loop_to_llvm import lower_to_llvm_dialect

    return backend.emit_assembly(lower_to_llvm_dialect(module), num_threads)


def emit_object(module: ModuleOp, num_threads: int | None = None) -> bytes:
    from tilecraft.backends import llvm as backend
    from tilecraft.pipelines.loop_to_llvm import lower_to_llvm_dialect

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
    from tilecraft.pipelines.loop_to_llvm import lower_to_llvm_dialect

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
