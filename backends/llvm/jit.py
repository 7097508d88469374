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

A function with run-time checks (`loop.assert`, e.g. gather's index check) records
a failed one in the module's error word; after the call, `RuntimeErrors.check`
turns it into a `RuntimeCheckError` with the check's message.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import NoReturn
from dataclasses import dataclass
from math import prod

import llvmlite.binding as llvm_binding
import numpy as np
from tilecraft.backends.llvm.compile import CompileTimes, build_llvm_module
from tilecraft.backends.llvm.names import RUNTIME_ERROR, RUNTIME_ERROR_MESSAGES
from tilecraft.backends.llvm.runtime import default_flavour, pool_supported, shared_pool_launch
from tilecraft.backends.llvm.target import create_host_target_machine, object_target_machine
from tilecraft.utils.compile_timing import section
from tilecraft.utils.dtypes import numpy_dtype
from tilecraft.utils.threads import resolve_threads
from xdsl.dialects import func, memref
from xdsl.utils.exceptions import DiagnosticException
from tilecraft.utils import symbolic
from tilecraft.utils.symbolic import SymExpr, bind
from xdsl.dialects.builtin import (
    ArrayAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)


class RuntimeCheckError(DiagnosticException, RuntimeError):
    """A run-time check of compiled code failed (a gather index out of range):
    raised by the call, after it returned; the tools print it and exit 1."""


class RuntimeErrors:
    """The error word and messages of a compiled module (JIT or shared library).

    A failed `loop.assert` stores its code (1, 2, ...) in the i32 at `address`;
    `messages` holds the NUL-separated messages by code. Reading one int32 per call
    is all a module with checks costs its caller; a module without has none.

    The word is one per module, so calls into a module with checks take turns (a
    lock per word, `call`): a failure in one thread's call is never reported to
    another's. (A thread-local word would lose the failures of the parallel
    runtime's worker threads.)"""

    _locks: dict[int, threading.Lock] = {}
    _locks_guard = threading.Lock()

    def __init__(self, address: int, messages_address: int):
        self._word = ctypes.c_int32.from_address(address)
        self._messages_address = messages_address
        with RuntimeErrors._locks_guard:
            self._lock = RuntimeErrors._locks.setdefault(address, threading.Lock())

    @staticmethod
    def of(owner: object) -> RuntimeErrors | None:
        """Those of a JitModule or a loaded library (`ctypes.CDLL`), or None."""
        if isinstance(owner, JitModule):
            return owner.runtime_errors
        if isinstance(owner, ctypes.CDLL):
            try:
                word = ctypes.c_int32.in_dll(owner, RUNTIME_ERROR)
                text = ctypes.c_char.in_dll(owner, RUNTIME_ERROR_MESSAGES)
            except ValueError:  # no such symbol: the library has no checks
                return None
            return RuntimeErrors(ctypes.addressof(word), ctypes.addressof(text))
        return None

    def message(self, code: int) -> str:
        messages = []
        address = self._messages_address
        while len(messages) < code:
            text = ctypes.string_at(address)
            messages.append(text.decode(errors="replace"))
            address += len(text) + 1
        return messages[code - 1]

    def call(self, function, *args) -> None:
        """`function(*args)`, then raise the message of a check that failed in it."""
        with self._lock:
            function(*args)
            code = self._word.value
            if code:
                self._word.value = 0  # cleared for the next call
                raise RuntimeCheckError(f"runtime error: {self.message(code)}")


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a compiled function, as numpy sees it. A size is an int,
    or a SymExpr for a `?` dimension (its `tc.dims` name, else one of its own):
    the call passes the array's size there after its data pointer, and arrays
    whose shapes give one name two values are refused."""

    name: str
    shape: tuple[int | SymExpr, ...]
    dtype: np.dtype
    output: bool  # the function stores to it (itself or through a call)
    weight: str | None = None  # `tc.weight`: the weight store's array it takes

    @property
    def dynamic(self) -> tuple[int, ...]:
        """The dimensions whose sizes the call passes (the `?` ones)."""
        return tuple(k for k, d in enumerate(self.shape) if not isinstance(d, int))


def signatures_of(functions: Sequence[func.FuncOp]) -> dict[str, list[ArgSpec]]:
    """The ArgSpecs of each function; an argument passed where a callee writes
    counts as written (a model's graph function writes its outputs by calls)."""
    by_name = {f.sym_name.data: f for f in functions}
    done: dict[str, list[ArgSpec]] = {}

    def visit(f: func.FuncOp, active: frozenset[str]) -> list[ArgSpec]:
        name = f.sym_name.data
        if name not in done:
            written = {op.memref for op in f.walk() if isinstance(op, memref.StoreOp)}
            for op in f.walk():
                callee = by_name.get(op.callee.root_reference.data) if isinstance(op, func.CallOp) else None
                if callee is not None and callee.sym_name.data not in active:
                    specs = visit(callee, active | {name})
                    written |= {a for a, s in zip(op.arguments, specs) if s.output}
            done[name] = _specs(f, written)
        return done[name]

    for f in functions:
        visit(f, frozenset())
    return done


def signature_of(function: func.FuncOp) -> list[ArgSpec]:
    return _specs(function, {op.memref for op in function.walk() if isinstance(op, memref.StoreOp)})


def _specs(function: func.FuncOp, written) -> list[ArgSpec]:
    specs = []
    for i, arg in enumerate(function.body.block.args):
        t = arg.type
        assert isinstance(t, MemRefType)
        name, weight = f"arg{i}", None
        if function.arg_attrs is not None:
            attrs = function.arg_attrs.data[i].data
            if isinstance(attrs.get("tc.name"), StringAttr):
                name = attrs["tc.name"].data  # type: ignore[union-attr]
            if isinstance(attrs.get("tc.weight"), StringAttr):
                weight = attrs["tc.weight"].data  # type: ignore[union-attr]
                name = weight
        specs.append(
            ArgSpec(name, _shape(t, function, i), numpy_dtype(t.element_type), arg in written, weight)
        )
    return specs


def _shape(t: MemRefType, function: func.FuncOp, i: int) -> tuple[int | SymExpr, ...]:
    """The argument's sizes: a `?` is the expression its `tc.dims` gives it, else
    a name of its own (`arg<i>_<dim>`: bound by this argument alone)."""
    names = None
    if function.arg_attrs is not None:
        names = function.arg_attrs.data[i].data.get("tc.dims")
    given = iter(names.data if isinstance(names, ArrayAttr) else ())
    shape: list[int | SymExpr] = []
    for k, d in enumerate(t.get_shape()):
        if d >= 0:
            shape.append(d)
            continue
        name = next(given, None)
        shape.append(symbolic.parse(name.data) if isinstance(name, StringAttr) else SymExpr.lift(f"arg{i}_{k}"))
    return tuple(shape)


def _find_data_address() -> Callable[[np.ndarray], int]:
    """The fastest correct way to read an array's data pointer.

    `array.ctypes.data` costs ~1.5 us, a tenth of a small kernel's call; reading
    the `data` field of numpy's array struct (just after the object header)
    costs ~0.3 us. The field's offset is found and verified here, once, against
    `ctypes.data` on probe arrays; if it cannot be, the slow way is used.
    """
    probes = [np.zeros(3, np.float32), np.ones((2, 5), np.int8)[1:]]
    for offset in (16, 24, 32, 40):
        field = ctypes.c_size_t
        if all(field.from_address(id(p) + offset).value == p.ctypes.data for p in probes):
            return lambda array: field.from_address(id(array) + offset).value
    return lambda array: array.ctypes.data


_data_address = _find_data_address()


def _describe(spec: ArgSpec, index: int) -> str:
    return f"argument '{spec.name}' (#{index + 1})"


class CompiledFunction:
    """A native function of a JitModule, called with numpy arrays."""

    def __init__(self, name: str, specs: Sequence[ArgSpec], address: int, owner: JitModule | ctypes.CDLL):
        self.name = name
        self.specs = tuple(specs)
        self._owner = owner  # keeps the machine code alive
        self._dynamic = any(s.dynamic for s in specs)
        arg_types = [t for s in specs for t in [ctypes.c_void_p, *[ctypes.c_int64] * len(s.dynamic)]]
        self._function = ctypes.CFUNCTYPE(None, *arg_types)(address)
        self._outputs = [i for i, s in enumerate(specs) if s.output] if len(specs) > 1 else []
        self._sizes = [0 if s.dynamic else nbytes(s) for s in specs]
        self._errors = RuntimeErrors.of(owner)

    @property
    def unchecked(self):
        """The raw ctypes function taking one data address per argument (each
        followed by its `?` sizes). It checks nothing: for callers (the model
        runtime) that validated the buffers once."""
        return self._function

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
        if self._errors is None:
            self._function(*self.check(arrays))
        else:
            self._errors.call(self._function, *self.check(arrays))

    def check(self, arrays: Sequence[object]) -> list[int]:
        """Validate `arrays` against the signature; their data addresses.

        Written for speed (it runs on every call): one cheap test per array, and
        the precise message only once something is wrong.
        """
        if len(arrays) != len(self.specs):
            raise ValueError(
                f"{self.name}() takes {len(self.specs)} arrays "
                f"({', '.join(self.arg_names)}), got {len(arrays)}"
            )
        if self._dynamic:
            return self._check_dynamic(arrays)
        addresses = []
        for i, (array, spec) in enumerate(zip(arrays, self.specs)):
            if not isinstance(array, np.ndarray) or array.shape != spec.shape:
                self._reject(array, spec, i)
            flags = array.flags  # type: ignore[union-attr]
            if (
                array.dtype != spec.dtype  # type: ignore[union-attr]
                or not (flags.c_contiguous and flags.aligned)
                or (spec.output and not flags.writeable)
            ):
                self._reject(array, spec, i)
            addresses.append(_data_address(array))  # type: ignore[arg-type]
        if self._outputs:
            self._check_overlap(addresses)
        return addresses

    def _check_dynamic(self, arrays: Sequence[object]) -> list[int]:
        """`check` where some sizes are `?`: the arrays' shapes bind the names
        (utils/symbolic.py `bind`), then each address is followed by its sizes."""
        bindings: dict[str, int] = {}
        arguments: list[int] = []
        for i, (array, spec) in enumerate(zip(arrays, self.specs)):
            if not isinstance(array, np.ndarray):
                self._reject(array, spec, i)
            bindings = bind(spec.shape, array.shape, _describe(spec, i), bindings)
            flags = array.flags
            if (
                array.dtype != spec.dtype
                or not (flags.c_contiguous and flags.aligned)
                or (spec.output and not flags.writeable)
            ):
                self._reject(array, spec, i)
            arguments.append(_data_address(array))
            arguments.extend(array.shape[k] for k in spec.dynamic)
        if self._outputs:
            starts = [_data_address(a) for a in arrays]  # type: ignore[arg-type]
            self._check_overlap(starts, [a.nbytes for a in arrays])  # type: ignore[union-attr]
        return arguments

    @staticmethod
    def _reject(array: object, spec: ArgSpec, index: int) -> NoReturn:
        what = _describe(spec, index)
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
        raise ValueError(f"{what} is an output but is not writeable")

    def _check_overlap(self, addresses: list[int], sizes: list[int] | None = None) -> None:
        sizes = self._sizes if sizes is None else sizes
        for i in self._outputs:
            start, end = addresses[i], addresses[i] + sizes[i]
            for j, other in enumerate(addresses):
                if j != i and sizes[j] and other < end and start < other + sizes[j]:
                    raise ValueError(
                        f"{_describe(self.specs[i], i)} is an output and overlaps "
                        f"{_describe(self.specs[j], j)}; pass separate arrays"
                    )


class JitModule:
    """The functions of one compiled module, by name."""

    def __init__(
        self,
        engine: llvm_binding.ExecutionEngine,
        llvm_module: llvm_binding.ModuleRef | None,
        signatures: dict[str, list[ArgSpec]],
        times: CompileTimes,
        symbols: dict[str, str] | None = None,
    ):
        self._engine = engine
        self._symbols = dict(symbols or {})  # name -> the symbol of its code
        self.llvm_module = llvm_module
        self.times = times
        address = engine.get_global_value_address(RUNTIME_ERROR)
        self.runtime_errors: RuntimeErrors | None = None
        if address:
            messages = engine.get_global_value_address(RUNTIME_ERROR_MESSAGES)
            self.runtime_errors = RuntimeErrors(address, messages)
        self.functions: dict[str, CompiledFunction] = {
            name: CompiledFunction(name, specs, engine.get_function_address(self._symbols.get(name, name)), self)
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

    def address(self, name: str) -> int:
        """The machine-code address of the function `name` (any function of the
        module, including ones lowered to the llvm dialect before compilation)."""
        address = self._engine.get_function_address(self._symbols.get(name, name))
        if not address:
            raise KeyError(f"no function '{name}' in this module")
        return address

    @property
    def llvm_ir(self) -> str:
        """The optimized LLVM IR that was compiled (not kept when the module was
        linked from object files: `jit_objects`)."""
        if self.llvm_module is None:
            raise ValueError("this module was linked from object files; its LLVM IR was not kept")
        return str(self.llvm_module)


def jit_module(
    module: ModuleOp,
    signatures: dict[str, list[ArgSpec]],
    *,
    num_threads: int | None = None,
    runtime: str | None = None,
    times: CompileTimes | None = None,
    optimize: bool = True,
) -> JitModule:
    """JIT-compile an llvm-dialect module for this CPU; `signatures` are the
    loop-level functions' (`signatures_of`), which it was lowered from.
    `optimize=False` skips LLVM's O3 (a build that is run once, for its counts).

    `num_threads` (default: `OMP_NUM_THREADS`, else the CPUs this process may run
    on) is how many threads a parallel loop uses; `runtime` is "pool" (the
    default: the process's pool of threads, shared by all JIT modules) or
    "pthread" (threads created per launch); see runtime.py.
    """
    times = times if times is not None else CompileTimes()
    llvm_module = build_llvm_module(
        module, jit_flavour(runtime or default_flavour()), resolve_threads(num_threads), optimize, times=times
    )
    with section("LLVM codegen"):
        engine = llvm_binding.create_mcjit_compiler(llvm_module, create_host_target_machine(jit=True))
        engine.finalize_object()
    return JitModule(engine, llvm_module, signatures, times)


def emit_jit_object(
    module: ModuleOp,
    *,
    num_threads: int | None = None,
    runtime: str | None = None,
    entry_points: bool | None = None,
) -> bytes:
    """An llvm-dialect module compiled (O3) to an object file that `jit_objects`
    loads: what `jit_module` would run, as bytes that can be cached or made in
    another process. Its parallel loops call the process's shared pool;
    `entry_points` as `runtime.add_parallel_runtime` takes it."""
    llvm_module = build_llvm_module(
        module, jit_flavour(runtime or default_flavour()), resolve_threads(num_threads), entry_points=entry_points
    )
    with section("LLVM codegen"):
        return object_target_machine().emit_object(llvm_module)


def jit_objects(
    objects: Sequence[bytes],
    signatures: dict[str, list[ArgSpec]],
    *,
    symbols: dict[str, str] | None = None,
    num_threads: int | None = None,
    runtime: str | None = None,
) -> JitModule:
    """Load object files of `emit_jit_object` into one JIT module: their calls of
    each other's functions are linked by name. `signatures` name the functions
    callers see; `symbols` maps such a name to the symbol its code has where they
    differ (a kernel compiled under the name of its content)."""
    flavour = jit_flavour(runtime or default_flavour())
    if flavour == "shared-pool":
        # An object refers to the pool by name; the pool must exist to link it.
        shared_pool_launch(resolve_threads(num_threads))
    with section("LLVM link"):
        empty = llvm_binding.parse_assembly("")
        empty.triple = llvm_binding.get_process_triple()
        engine = llvm_binding.create_mcjit_compiler(empty, create_host_target_machine(jit=True))
        for data in objects:
            engine.add_object_file(llvm_binding.ObjectFileRef.from_data(bytes(data)))
        engine.finalize_object()
    return JitModule(engine, None, signatures, CompileTimes(), symbols)


def jit_flavour(runtime: str) -> str:
    """What `add_parallel_runtime` builds for a JIT runtime choice: its pool is the
    process's (JIT code is freed with its module, the pool's threads outlive it)."""
    if runtime == "pool":
        if not pool_supported(llvm_binding.get_process_triple()):
            raise ValueError("the pool runtime does not support this CPU; use pthread")
        return "shared-pool"
    if runtime != "pthread":
        raise ValueError(f"unknown parallel runtime '{runtime}' (expected pool or pthread)")
    return runtime


def shape_to_json(shape: Sequence[int | SymExpr]) -> list[int | str]:
    """A signature's shape for a manifest: ints, and `?` sizes as their text."""
    return [d if isinstance(d, int) else str(d) for d in shape]


def shape_from_json(shape: Sequence[object]) -> tuple[int | SymExpr, ...]:
    """`shape_to_json`'s inverse (a ValueError on anything else)."""
    return tuple(symbolic.parse(d) if isinstance(d, str) else int(d) for d in shape)  # type: ignore[call-overload]


def nbytes(spec: ArgSpec) -> int:
    """The bytes of a static argument (a `?` size has none until called)."""
    if spec.dynamic:
        raise ValueError(f"argument '{spec.name}' has sizes known only when called: {spec.shape}")
    return prod(spec.shape) * spec.dtype.itemsize  # type: ignore[arg-type]
