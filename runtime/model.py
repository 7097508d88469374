"""`CompiledModel`: a compiled model called like a function, numpy in and out.

A model is one native function, the loop-level `@main` that compile-model
produces: it takes the model's inputs, then its weights, then its outputs (one
data pointer each) and calls the kernels itself on views of its arena. So a
model call is one call into native code: the inputs are checked (by name, shape
and dtype, with a `ValueError` naming the input), fresh output arrays are
allocated, and the pointers go to `@main` in one ctypes call. The weights are
bound once, when the model is built. Weights and outputs start on a cache line
(utils/aligned.py), as the arena does; inputs are read where the caller has them.

`Port` (driver/ports.py) describes one argument of `@main`; the list of ports
is the model's signature, and what a saved model's manifest records.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from tilecraft.driver.ports import INPUT, OUTPUT, WEIGHT, Port
from tilecraft.utils.aligned import aligned, aligned_empty
from tilecraft.utils.symbolic import bind


def ctypes_function(address_or_symbol, nargs: int) -> Callable:
    """A ctypes callable taking `nargs` raw pointers (ints) and returning nothing."""
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * nargs)(address_or_symbol)


class CompiledModel:
    """A model compiled for the CPU: `m(x)` or `m(**inputs)` -> numpy outputs."""

    def __init__(
        self,
        entry: Callable,
        ports: Sequence[Port],
        weights: Mapping[str, np.ndarray],
        *,
        entry_name: str = "main",
        kernel_calls: Sequence[str] = (),
        arena_bytes: int = 0,
        naive_bytes: int = 0,
        ir: str | None = None,
        module=None,
        num_threads: int | None = None,
        compile_seconds: float = 0.0,
        passes: Sequence[str] = (),
        owner: object = None,
        tuned: Mapping[str, dict] | None = None,
    ):
        self._entry = entry
        # workload key -> the tuned config its schedule used (tc.compile(tuning_log=))
        self.tuned = dict(tuned or {})
        self.entry_name = entry_name
        self.ports = list(ports)
        self._owner = owner  # keeps the machine code alive
        from tilecraft.backends.llvm.jit import RuntimeErrors

        self._errors = RuntimeErrors.of(owner)  # its run-time checks' error word
        self._module = module  # the loop-level module, for save() and profile()
        self.ir = ir
        self.num_threads = num_threads
        self.kernel_calls = list(kernel_calls)
        self.planned_bytes = arena_bytes
        self.naive_bytes = naive_bytes
        self.compile_seconds = compile_seconds
        self.passes = list(passes)
        self._weights = {p.name: _bind_weight(p, weights) for p in self.ports if p.kind == WEIGHT}
        self._inputs = [(n, p) for n, p in enumerate(self.ports) if p.kind == INPUT]
        self._outputs = [(n, p) for n, p in enumerate(self.ports) if p.kind == OUTPUT]
        self.input_names = [p.name for _, p in self._inputs]
        # Sizes known when it runs: bound from the inputs' shapes at each call.
        self._dynamic = any(p.dynamic for p in self.ports)
        # One address per port; the weights' are fixed, the rest are set per call.
        self._addresses: list[int] = [
            self._weights[p.name].ctypes.data if p.kind == WEIGHT else 0 for p in self.ports
        ]

    @property
    def module(self):
        """The loop-level module that was compiled (None for a loaded model)."""
        if callable(self._module):  # a model from the compile cache parses its IR on demand
            self._module = self._module()
        return self._module

    @property
    def num_kernels(self) -> int:
        """How many distinct kernels the model calls."""
        return len(set(self.kernel_calls))

    @property
    def inputs(self) -> list[tuple[str, tuple[int, ...], np.dtype]]:
        """(name, shape, dtype) of each input, in order."""
        return [(p.name, p.user_shape, p.dtype) for _, p in self._inputs]

    @property
    def outputs(self) -> list[tuple[str, tuple[int, ...], np.dtype]]:
        return [(p.name, p.user_shape, p.dtype) for _, p in self._outputs]

    @property
    def weights(self) -> dict[str, np.ndarray]:
        """The bound weights by name (read-only views)."""
        views = {}
        for name, array in self._weights.items():
            view = array.view()
            view.flags.writeable = False
            views[name] = view
        return views

    def __repr__(self) -> str:
        ins = ", ".join(f"{n}: {d}{list(s)}" for n, s, d in self.inputs)
        return f"<CompiledModel({ins}), {len(self.kernel_calls)} kernel calls>"

    def _arrays(self, args: tuple, kwargs: dict) -> list[np.ndarray]:
        names = self.input_names
        if args and kwargs:
            raise ValueError("pass the inputs either all by position or all by name")
        if args:
            if len(args) != len(names):
                missing = names[len(args) :]
                detail = (f"missing input(s) {', '.join(repr(n) for n in missing)}" if missing
                          else f"{len(args) - len(names)} extra input(s)")
                raise ValueError(f"the model takes {len(names)} input(s) ({', '.join(names)}); {detail}")
            given = dict(zip(names, args))
        else:
            given = kwargs
            missing = [n for n in names if n not in given]
            if missing:
                raise ValueError(f"missing input(s) {', '.join(repr(n) for n in missing)}; "
                                 f"the model's inputs are {', '.join(names)}")
            extra = [n for n in given if n not in names]
            if extra:
                raise ValueError(f"unexpected input(s) {', '.join(repr(n) for n in extra)}; "
                                 f"the model's inputs are {', '.join(names)}")
        arrays = []
        for _, port in self._inputs:
            array = given[port.name]
            if not isinstance(array, np.ndarray):
                array = _as_array(array, port)
            if array.dtype != port.dtype:
                raise ValueError(f"input '{port.name}' has dtype {array.dtype}, expected {port.dtype}")
            if array.shape != port.user_shape and not self._dynamic:
                raise ValueError(f"input '{port.name}' has shape {array.shape}, expected {port.user_shape}")
            if not array.flags.c_contiguous or not array.flags.aligned:
                array = np.ascontiguousarray(array)
            arrays.append(array)
        return arrays

    def _sizes(self, inputs: list[np.ndarray]) -> dict[str, int]:
        """The sizes known when the model runs, bound from the inputs' shapes; a
        ValueError names the input and the dimension that disagree."""
        bindings: dict[str, int] = {}
        for (_, port), array in zip(self._inputs, inputs):
            bindings = bind(port.user_shape, array.shape, f"input '{port.name}'", bindings)
        return bindings

    def _bind_dynamic(self, inputs: list[np.ndarray]) -> tuple[list[int], list[np.ndarray]]:
        """`_bind` for a model with sizes known when it runs: each buffer's address
        followed by its `?` sizes, the outputs allocated at the sizes bound."""
        bindings = self._sizes(inputs)
        given = iter(inputs)
        arguments: list[int] = []
        outputs = []
        for n, port in enumerate(self.ports):
            if port.kind == INPUT:
                array = next(given)
            elif port.kind == OUTPUT:
                array = aligned_empty(tuple(_value(d, bindings) for d in port.user_shape), port.dtype)
                outputs.append(array)
            else:
                array = self._weights[port.name]
            arguments.append(array.ctypes.data)
            arguments.extend(_value(port.shape[k], bindings) for k in port.dynamic)
        return arguments, outputs

    def _bind(self, inputs: list[np.ndarray]) -> tuple[list[int], list[np.ndarray]]:
        """The entry point's arguments for `inputs`, and fresh output arrays."""
        if self._dynamic:
            return self._bind_dynamic(inputs)
        addresses = list(self._addresses)  # a copy: calls from two threads do not mix
        for (n, _), array in zip(self._inputs, inputs):
            addresses[n] = array.ctypes.data
        outputs = []
        for n, port in self._outputs:
            array = aligned_empty(port.user_shape, port.dtype)
            addresses[n] = array.ctypes.data
            outputs.append(array)
        return addresses, outputs

    def _run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        addresses, outputs = self._bind(inputs)
        if self._errors is None:
            self._entry(*addresses)
        else:  # a failed run-time check (gather index) raises
            self._errors.call(self._entry, *addresses)
        return outputs

    def __call__(self, *args, **kwargs):
        outputs = self._run(self._arrays(args, kwargs))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def profile(self, *args, repeat: int = 20, **kwargs) -> list[tuple[str, float]]:
        """(kernel, median seconds) of each kernel call in order, over `repeat` runs
        (like TVM's debug executor): where a model's time goes. The first call
        builds an instrumented copy of the model (runtime/profile.py)."""
        from tilecraft.runtime.profile import Profiler, median_times

        if self.module is None:
            raise ValueError("a loaded model cannot be profiled; profile the compiled one")
        if getattr(self, "_profiler", None) is None:
            nargs = sum(1 + len(p.dynamic) for p in self.ports)  # (a `?` size follows its buffer)
            self._profiler = Profiler(self._module, self.entry_name, nargs, self.num_threads, len(self.kernel_calls))
        addresses, outputs = self._bind(self._arrays(args, kwargs))
        self._profiler.run(addresses)  # warm-up
        runs = [self._profiler.run(addresses) for _ in range(repeat)]
        return list(zip(self.kernel_calls, median_times(runs)))

    def counters(self, *args, **kwargs):
        """What one call on these inputs did, counted as it ran (`runtime.counters.Counts`):
        per kernel its calls, loop iterations, FLOPs, MACs, bytes read and written
        per buffer, guards evaluated and taken, beside the static analysis's counts.
        The first call builds an instrumented copy of the model, serial (its
        counters are incremented one iteration at a time) and without LLVM's O3
        (it compiles in seconds; `runtime.counters.CounterBuild` makes an optimized one)."""
        from tilecraft.runtime.counters import CounterBuild

        if self.module is None:
            raise ValueError("a loaded model cannot be instrumented; instrument the compiled one")
        self._static_only("counters")
        if getattr(self, "_counter_build", None) is None:
            self._counter_build = CounterBuild(self.module, self.entry_name, self.num_threads, optimize=False)
        addresses, _ = self._bind(self._arrays(args, kwargs))
        return self._counter_build.run_addresses(addresses)

    def save(self, path) -> None:
        """Write the model as a shared library, a manifest and its weights (.npz)
        into the directory `path`; `tilecraft.runtime.load(path)` reads it back."""
        from tilecraft.runtime.saved import save

        if self.module is None:
            raise ValueError("this model was loaded from a library; copy its directory instead")
        save(path, self)

    def _static_only(self, what: str) -> None:
        if self._dynamic:
            raise NotImplementedError(
                f"{what} of a model with sizes known only when it runs is not supported yet; "
                "compile it with input_shapes= for one shape"
            )


def _value(d, bindings: Mapping[str, int]) -> int:
    return d if isinstance(d, int) else d.evaluate(bindings)


def _as_array(value, port: Port) -> np.ndarray:
    """A value given for an input as an array. A Python number for a scalar input
    takes the input's dtype: rounded to a float one (`m(0.1)` for float32), exactly
    to an integer one (2.5 or 2**40 for int32 stay as they are, and are refused)."""
    array = np.asarray(value)
    if port.user_shape != () or not isinstance(value, (bool, int, float)) or array.dtype == port.dtype:
        return array
    with np.errstate(all="ignore"):
        cast = array.astype(port.dtype)
    exact = bool(cast == array) or bool(np.isnan(array) and np.isnan(cast))
    return cast if port.dtype.kind == "f" or exact else array


def _bind_weight(port: Port, weights: Mapping[str, np.ndarray]) -> np.ndarray:
    if port.name not in weights:
        raise ValueError(f"no array for weight '{port.name}'")
    from tilecraft.utils.weights import mismatch

    array = np.asarray(weights[port.name])
    # The shape itself, not only the element count: a transposed weight has as many.
    problem = mismatch(port.name, array, port.shape, port.dtype)
    if problem is not None:
        raise ValueError(problem)
    return aligned(array.reshape(port.shape))
