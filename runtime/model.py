"""`CompiledModel`: a compiled model called like a function, numpy in and out.

Everything that can be decided before the first call is: the weights are bound
once, the arena is allocated once, and every kernel call is a ctypes function
pointer with a list of raw data addresses. A call checks the inputs (by name,
shape and dtype, with a `ValueError` naming the input), writes the input and
output addresses into the argument lists that take them, and runs the steps.
No per-kernel checks run on that path: the plan was checked against the kernels'
signatures when it was built.

A model owns one arena, so one model must not be called from two threads at once.
"""

from __future__ import annotations

import statistics
import time

import ctypes
from collections.abc import Callable, Mapping

import numpy as np

from tilecraft.runtime.plan import ALIGNMENT, Plan, Slot, planned_bytes


def _aligned_bytes(nbytes: int) -> np.ndarray:
    raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    return raw[start : start + nbytes]


def _address(array: np.ndarray) -> int:
    return array.ctypes.data


class Executor:
    """Runs a plan's steps with bound buffers."""

    def __init__(self, plan: Plan, functions: Mapping[str, Callable], constants: Mapping[str, np.ndarray]):
        self.plan = plan
        self.arena = _aligned_bytes(max(plan.arena_bytes, 1))
        self.arrays: list[np.ndarray | None] = [self._bind(s, constants) for s in plan.slots]
        input_pos = {slot: n for n, slot in enumerate(plan.inputs)}
        self.output_slots = [n for n, s in enumerate(plan.slots) if s.kind == "output"]
        output_pos = {slot: n for n, slot in enumerate(self.output_slots)}
        self.calls: list[tuple[Callable, list[int]]] = []
        # Where each input / output address goes: (call, argument position).
        self.input_patches: list[list[tuple[int, int]]] = [[] for _ in plan.inputs]
        self.output_patches: list[list[tuple[int, int]]] = [[] for _ in self.output_slots]
        for c, step in enumerate(plan.steps):
            addresses = []
            for p, slot in enumerate(step.args):
                array = self.arrays[slot]
                addresses.append(_address(array) if array is not None else 0)
                if slot in input_pos:
                    self.input_patches[input_pos[slot]].append((c, p))
                elif slot in output_pos:
                    self.output_patches[output_pos[slot]].append((c, p))
            self.calls.append((functions[step.kernel], addresses))

    def _bind(self, slot: Slot, constants: Mapping[str, np.ndarray]) -> np.ndarray | None:
        if slot.kind == "const":
            return np.ascontiguousarray(constants[slot.ref], dtype=slot.dtype).reshape(slot.shape)
        if slot.kind == "arena":
            view = self.arena[slot.offset : slot.offset + slot.nbytes]
            return view.view(slot.dtype).reshape(slot.shape)
        if slot.kind == "buffer":
            return np.empty(slot.shape, slot.dtype)
        return None  # input / output: bound per call

    def run(self, inputs: list[np.ndarray], timings: list[float] | None = None) -> list[np.ndarray]:
        """Run every step; with `timings`, append each call's seconds to it."""
        calls = self.calls
        for patches, array in zip(self.input_patches, inputs):
            address = _address(array)
            for c, p in patches:
                calls[c][1][p] = address
        outputs = [np.empty(self.plan.slots[s].shape, self.plan.slots[s].dtype) for s in self.output_slots]
        for patches, array in zip(self.output_patches, outputs):
            address = _address(array)
            for c, p in patches:
                calls[c][1][p] = address
        if timings is None:
            for function, args in calls:
                function(*args)
        else:
            for function, args in calls:
                start = time.perf_counter()
                function(*args)
                timings.append(time.perf_counter() - start)
        by_slot = dict(zip(self.output_slots, outputs))
        for slot, array in zip(self.plan.inputs, inputs):
            by_slot.setdefault(slot, array)
        results = []
        for slot in self.plan.outputs:
            array = by_slot.get(slot)
            if array is None:
                array = self.arrays[slot]
            # Inputs, weights and repeated results are returned as copies.
            fresh = slot in self.output_slots and not any(r is array for r in results)
            results.append(array if fresh else np.array(array))
        return results


class CompiledModel:
    """A model compiled for the CPU: `m(x)` or `m(**inputs)` -> numpy outputs."""

    def __init__(
        self,
        plan: Plan,
        functions: Mapping[str, Callable],
        constants: Mapping[str, np.ndarray],
        *,
        compile_seconds: float = 0.0,
        kernel_module=None,
        owner: object = None,
        passes: list[str] | None = None,
    ):
        self.plan = plan
        self._executor = Executor(plan, functions, constants)
        self._constants = dict(constants)
        self._kernel_module = kernel_module  # loop-level kernels, for save()
        self._owner = owner  # keeps the machine code alive
        self.compile_seconds = compile_seconds
        self.passes = list(passes or [])
        slots = plan.slots
        self.input_names = [slots[s].ref for s in plan.inputs]
        self._input_specs = [(slots[s].ref, tuple(slots[s].shape), np.dtype(slots[s].dtype)) for s in plan.inputs]

    @property
    def planned_bytes(self) -> int:
        return planned_bytes(self.plan)

    @property
    def naive_bytes(self) -> int:
        return self.plan.naive_bytes

    @property
    def num_kernels(self) -> int:
        return len({step.kernel for step in self.plan.steps})

    @property
    def inputs(self) -> list[tuple[str, tuple[int, ...], np.dtype]]:
        """(name, shape, dtype) of each input, in order."""
        return list(self._input_specs)

    def __repr__(self) -> str:
        ins = ", ".join(f"{n}: {d}{list(s)}" for n, s, d in self._input_specs)
        return f"<CompiledModel({ins}), {len(self.plan.steps)} kernel calls>"

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
        for name, shape, dtype in self._input_specs:
            array = given[name]
            if not isinstance(array, np.ndarray):
                array = np.asarray(array)
            if array.dtype != dtype:
                raise ValueError(f"input '{name}' has dtype {array.dtype}, expected {dtype}")
            if array.shape != shape:
                raise ValueError(f"input '{name}' has shape {array.shape}, expected {shape}")
            if not array.flags.c_contiguous or not array.flags.aligned:
                array = np.ascontiguousarray(array)
            arrays.append(array)
        return arrays

    def __call__(self, *args, **kwargs):
        outputs = self._executor.run(self._arrays(args, kwargs))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def profile(self, *args, repeat: int = 20, **kwargs) -> list[tuple[str, float]]:
        """(kernel, median seconds) of each kernel call in order, over `repeat` runs
        (like TVM's debug executor): where a model's time goes."""
        arrays = self._arrays(args, kwargs)
        self._executor.run(arrays)  # warm-up
        runs = []
        for _ in range(repeat):
            timings: list[float] = []
            self._executor.run(arrays, timings)
            runs.append(timings)
        kernels = [step.kernel for step in self.plan.steps]
        return [(k, statistics.median(r[n] for r in runs)) for n, k in enumerate(kernels)]

    def save(self, path) -> None:
        """Write the kernels as a shared library, the plan as JSON and the weights as
        .npz into the directory `path`; `tilecraft.runtime.load(path)` reads it back."""
        from tilecraft.runtime.saved import save

        if self._kernel_module is None:
            raise ValueError("this model was loaded from a library; copy its directory instead")
        save(path, self.plan, self._constants, self._kernel_module)


def ctypes_function(address_or_symbol, nargs: int) -> Callable:
    """A ctypes callable taking `nargs` raw pointers (ints) and returning nothing."""
    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * nargs)(address_or_symbol)
