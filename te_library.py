"""Saving a built te function and loading it back: `f.export_library("f.so")`,
`f.save("f.o")` (+ `tvm.contrib.cc.create_shared`), `tilecraft.runtime.load_module`.

The library holds the native function (the backend's convention: inputs, then
outputs), once per set of sizes for a function with `te.var` sizes (each size it
was called with so far, under its own symbol). `<path>.json`, written next to
the file, holds what the loader needs to call it safely: per variant its symbol
and each argument's name, shape and dtype in the backend's order, which of them
are written; and the user's argument order. A loaded function picks the variant
whose shapes match the arrays it is given.
"""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import numpy as np

FORMAT = "tilecraft-te-function"
VERSION = 2


def merged_module(variants):
    """One loop-level module holding the functions of several modules."""
    from xdsl.dialects.builtin import ModuleOp

    return ModuleOp([op.clone() for _, module in variants for op in module.ops])


def manifest(function, variants) -> dict:
    """The JSON manifest for `variants`, a list of (symbol, loop-level module)."""
    from xdsl.dialects import func

    from tilecraft.backends.llvm.jit import signatures_of
    from tilecraft.frontends.te.symbolic import Var
    from tilecraft.frontends.te.tensor import ComputeOp

    size_ids = {id(v) for v in function._size_vars}
    positions = [n for n, a in enumerate(function._args) if not (isinstance(a, Var) and id(a) in size_ids)]
    call_args = [function._args[n] for n in positions]
    is_input = [isinstance(a, Var) or not isinstance(a.op, ComputeOp) for a in call_args]
    order = [n for n, i in enumerate(is_input) if i] + [n for n, i in enumerate(is_input) if not i]
    entries = []
    for symbol, module in variants:
        specs = signatures_of([op for op in module.ops if isinstance(op, func.FuncOp)])[symbol]
        entries.append({
            "symbol": symbol,
            "args": [
                {"name": s.name, "shape": list(s.shape), "dtype": str(s.dtype), "output": s.output}
                for s in specs
            ],
        })
    return {
        "format": FORMAT,
        "version": VERSION,
        "entry": function.entry_name,
        "arity": len(function._args),
        "positions": positions,  # the user's arguments passed on (explicit sizes are not)
        "order": order,  # backend argument k is the k-th of those
        "scalars": [n for n, a in enumerate(call_args) if isinstance(a, Var)],
        "variants": entries,
    }


def export_library(function, variants, path: str) -> None:
    from tilecraft.compiler import emit_shared_library

    emit_shared_library(merged_module(variants), path)
    Path(path + ".json").write_text(json.dumps(manifest(function, variants), indent=1))


def save_object(function, variants, path: str) -> None:
    from tilecraft.compiler import emit_object

    Path(path).write_bytes(emit_object(merged_module(variants)))
    Path(path + ".json").write_text(json.dumps(manifest(function, variants), indent=1))


def link_manifest(output: str, objects: list[str]) -> None:
    """After `create_shared(output, objects)`: the manifest of the one object
    that has one, for `load_module(output)`."""
    found = [o for o in objects if Path(str(o) + ".json").exists()]
    if len(found) == 1:
        Path(output + ".json").write_text(Path(str(found[0]) + ".json").read_text())


class LoadedFunction:
    """A te function loaded from a shared library; called like the built one."""

    def __init__(self, entry: str, arity: int, positions, order, scalars, variants):
        self.entry_name = entry
        self._arity, self._positions, self._order = arity, positions, order
        self._scalars = set(scalars)
        self._variants = variants  # [(CompiledFunction, specs)]

    def _pick(self, values):
        for compiled, specs in self._variants:
            by_position = {n: specs[k] for k, n in enumerate(self._order)}
            if all(
                n in self._scalars or (isinstance(x, np.ndarray) and x.shape == by_position[n].shape)
                for n, x in enumerate(values)
            ):
                return compiled, by_position
        shapes = ", ".join(str(np.shape(x)) for x in values)
        raise ValueError(
            f"{self.entry_name} was saved for the sizes it had been called with; none "
            f"matches these arrays ({shapes})"
        )

    def __call__(self, *arrays) -> None:
        if len(arrays) != self._arity:
            raise TypeError(f"{self.entry_name} takes {self._arity} arguments, got {len(arrays)}")
        values = [arrays[n] for n in self._positions]
        compiled, by_position = self._pick(values)
        values = [
            np.array([x], dtype=by_position[n].dtype) if n in self._scalars else x for n, x in enumerate(values)
        ]
        compiled(*(values[n] for n in self._order))

    def __getitem__(self, name: str) -> LoadedFunction:
        if name != self.entry_name:
            raise KeyError(f"this module has one function, {self.entry_name!r}, not {name!r}")
        return self

    def time_evaluator(self, func_name=None, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: int = 0, **_):
        from tilecraft.utils.time_evaluator import time_calls

        return lambda *arrays: time_calls(lambda: self(*arrays), number, repeat, min_repeat_ms)


def load_module(path) -> LoadedFunction:
    from tilecraft.backends.llvm.jit import ArgSpec, CompiledFunction

    path = str(path)
    manifest_path = path + ".json"
    try:
        data = json.loads(Path(manifest_path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(
            f"'{path}' was not saved by tilecraft's export_library: cannot read '{manifest_path}' ({e})"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ValueError(f"'{manifest_path}' is not a version-{VERSION} tilecraft function manifest")
    try:
        entry, arity = str(data["entry"]), int(data["arity"])
        positions = [int(n) for n in data["positions"]]
        order = [int(n) for n in data["order"]]
        scalars = [int(n) for n in data["scalars"]]
        variants = [
            (
                str(v["symbol"]),
                [ArgSpec(str(a["name"]), tuple(int(d) for d in a["shape"]), np.dtype(a["dtype"]), bool(a["output"]))
                 for a in v["args"]],
            )
            for v in data["variants"]
        ]
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"'{manifest_path}': malformed manifest ({type(e).__name__}: {e})") from None
    if (
        not variants
        or sorted(order) != list(range(len(positions)))
        or any(len(specs) != len(order) for _, specs in variants)
        or any(not 0 <= n < arity for n in positions)
    ):
        raise ValueError(f"'{manifest_path}': malformed manifest (arguments)")
    try:
        library = ctypes.CDLL(str(Path(path).resolve()))
        loaded = []
        for symbol, specs in variants:
            address = ctypes.cast(getattr(library, symbol), ctypes.c_void_p).value
            loaded.append((CompiledFunction(symbol, specs, address, library), specs))
    except (OSError, AttributeError) as e:
        raise ValueError(f"'{path}': cannot load the function {entry!r}: {e}") from None
    return LoadedFunction(entry, arity, positions, order, scalars, loaded)
