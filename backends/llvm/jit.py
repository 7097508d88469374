"""Compile a loop-level module in-process and call it on numpy arrays.

`compile_loop_module(module)` lowers, optimizes and JIT-compiles (MCJIT) every
`func.func` of the module and returns a `JitModule`; `jit["matmul"]` is a
`CompiledFunction` that calls the native code on numpy arrays without copying
them: outputs are written in place.

Native code trusts its arguments completely (a wrong shape reads out of bounds,
an output that overlaps an input breaks the `noalias` promise), so every call
first checks each array against the function's signature, which was read from
the loop-level function before lowering: count, type (ndarray), shape, dtype,
C-contiguity and alignment; for outputs (arguments the function stores to) also
that they are writeable and overlap no other argument. Any mismatch raises
`ValueError` naming the argument.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from math import prod

import llvmlite.binding as llvm_binding
import numpy as np
from tilecraft.backends.llvm.compile import CompileTimes, build_llvm_module
from tilecraft.backends.llvm.runtime import default_flavour
from tilecraft.backends.llvm.target import create_host_target_machine
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    StringAttr,
)
from xdsl.ir import Attribute


def numpy_dtype(element: Attribute) -> np.dtype:
    """The numpy dtype of a memref element type (i1 is numpy's one-byte bool)."""
    if isinstance(element, IntegerType):
        bits = element.width.data
        if bits == 1:
            return np.dtype(np.bool_)
        unsigned = element.signedness.data == Signedness.UNSIGNED
        return np.dtype(f"{'u' if unsigned else 'i'}{bits // 8}")
    if isinstance(element, AnyFloat):
        return np.dtype(f"f{element.bitwidth // 8}")
    raise ValueError(f"no numpy dtype for element type {element}")


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a compiled function, as numpy sees it."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    output: bool  # the function stores to it


def signature_of(function: func.FuncOp) -> list[ArgSpec]:
    written = {op.memref for op in function.walk() if isinstance(op, memref.StoreOp)}
    specs = []
    for i, arg in enumerate(function.body.block.args):
        t = arg.type
        assert isinstance(t, MemRefType)
        name = f"arg{i}"
        if function.arg_attrs is not None:
            attr = function.arg_attrs.data[i].data.get("tc.name")
            if isinstance(attr, StringAttr):
                name = attr.data
        specs.append(
            ArgSpec(name, tuple(t.get_shape()), numpy_dtype(t.element_type), arg in written)
        )
    return specs


def _describe(spec: ArgSpec, index: int) -> str:
    return f"argument '{spec.name}' (#{index + 1})"


class CompiledFunction:
    """A native function of a JitModule, called with numpy arrays."""

    def __init__(self, name: str, specs: Sequence[ArgSpec], address: int, owner: JitModule):
        self.name = name
        self.specs = tuple(specs)
        self._owner = owner  # keeps the machine code alive
        self._function = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(specs))(address)

    @property
    def arg_names(self) -> list[str]:
        return [s.name for s in self.specs]

    @property
    def arg_types(self) -> list[tuple[tuple[int, ...], np.dtype]]:
        return [(s.shape, s.dtype) for s in self.specs]

    def __repr__(self) -> str:
        args = ", ".join(f"{s.name}: {s.dtype}{list(s.shape)}" for s in self.specs)
        return f"<CompiledFunction {self.name}({args})>"

    def __call__(self, *arrays: np.ndarray) -> None:
        self._function(*self.check(arrays))

    def check(self, arrays: Sequence[object]) -> list[int]:
        """Validate `arrays` against the signature; their data addresses."""
        if len(arrays) != len(self.specs):
            raise ValueError(
                f"{self.name}() takes {len(self.specs)} arrays "
                f"({', '.join(self.arg_names)}), got {len(arrays)}"
            )
        addresses = []
        for i, (array, spec) in enumerate(zip(arrays, self.specs)):
            what = _describe(spec, i)
            if not isinstance(array, np.ndarray):
                raise ValueError(f"{what} must be a numpy array, got {type(array).__name__}")
            if array.shape != spec.shape:
                raise ValueError(f"{what} has shape {array.shape}, expected {spec.shape}")
            if array.dtype != spec.dtype:
                raise ValueError(f"{what} has dtype {array.dtype}, expected {spec.dtype}")
            if not array.flags.c_contiguous:
                raise ValueError(f"{what} is not C-contiguous; pass np.ascontiguousarray(...)")
            if not array.flags.aligned:
                raise ValueError(f"{what} is not aligned to its element size")
            if spec.output and not array.flags.writeable:
                raise ValueError(f"{what} is an output but is not writeable")
            addresses.append(array.__array_interface__["data"][0])
        self._check_overlap(arrays, addresses)  # type: ignore[arg-type]
        return addresses

    def _check_overlap(self, arrays: Sequence[np.ndarray], addresses: list[int]) -> None:
        for i, spec in enumerate(self.specs):
            if not spec.output:
                continue
            start, end = addresses[i], addresses[i] + arrays[i].nbytes
            for j, other in enumerate(self.specs):
                if j == i or arrays[j].nbytes == 0:
                    continue
                if addresses[j] < end and start < addresses[j] + arrays[j].nbytes:
                    raise ValueError(
                        f"{_describe(spec, i)} is an output and overlaps "
                        f"{_describe(other, j)}; pass separate arrays"
                    )


class JitModule:
    """The functions of one compiled module, by name."""

    def __init__(
        self,
        engine: llvm_binding.ExecutionEngine,
        llvm_module: llvm_binding.ModuleRef,
        signatures: dict[str, list[ArgSpec]],
        times: CompileTimes,
    ):
        self._engine = engine
        self.llvm_module = llvm_module
        self.times = times
        self.functions: dict[str, CompiledFunction] = {
            name: CompiledFunction(name, specs, engine.get_function_address(name), self)
            for name, specs in signatures.items()
        }

    def __getitem__(self, name: str) -> CompiledFunction:
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(
                f"no function '{name}' in this module (it has: {', '.join(self.functions)})"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    @property
    def llvm_ir(self) -> str:
        """The optimized LLVM IR that was compiled."""
        return str(self.llvm_module)


def compile_loop_module(
    module: ModuleOp, *, num_threads: int | None = None, runtime: str | None = None
) -> JitModule:
    """JIT-compile every function of a loop-level module for this CPU.

    `num_threads` (default `os.cpu_count()`) is how many threads a parallel loop
    uses; `runtime` is "gomp" (the default when libgomp is found) or "pthread".
    """
    times = CompileTimes()
    llvm_module = build_llvm_module(
        module, runtime or default_flavour(), num_threads or os.cpu_count(), times=times
    )
    # After lowering, which has rejected functions that are not memrefs in, nothing out.
    signatures = {
        op.sym_name.data: signature_of(op) for op in module.ops if isinstance(op, func.FuncOp)
    }
    engine = llvm_binding.create_mcjit_compiler(llvm_module, create_host_target_machine(jit=True))
    engine.finalize_object()
    return JitModule(engine, llvm_module, signatures, times)


def nbytes(spec: ArgSpec) -> int:
    return prod(spec.shape) * spec.dtype.itemsize
