"""Saving a built te function as a shared library and loading it back:
`f.export_library("f.so")` and `tilecraft.runtime.load_module("f.so")`.

The library holds the native function (the backend's convention: inputs, then
outputs); `f.so.json`, written next to it, holds what the loader needs to call it
safely: the entry name, each argument's name, shape and dtype in the backend's
order, which of them are written, and the user's argument order.
"""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import numpy as np

FORMAT = "tilecraft-te-function"
VERSION = 1


def export_library(function, module, path: str) -> None:
    from tilecraft.backends.llvm.jit import signatures_of
    from xdsl.dialects import func

    from tilecraft.compiler import emit_shared_library
    from tilecraft.frontends.te.symbolic import Var
    from tilecraft.frontends.te.tensor import ComputeOp

    name = function.entry_name
    specs = signatures_of([op for op in module.ops if isinstance(op, func.FuncOp)])[name]
    call_args = [a for a in function._args]
    is_input = [isinstance(a, Var) or not isinstance(a.op, ComputeOp) for a in call_args]
    order = [n for n, i in enumerate(is_input) if i] + [n for n, i in enumerate(is_input) if not i]
    scalars = [n for n, a in enumerate(call_args) if isinstance(a, Var)]
    emit_shared_library(module, path)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "entry": name,
        "order": order,
        "scalars": scalars,
        "args": [
            {"name": s.name, "shape": list(s.shape), "dtype": str(s.dtype), "output": s.output}
            for s in specs
        ],
    }
    Path(path + ".json").write_text(json.dumps(manifest, indent=1))


class LoadedFunction:
    """A te function loaded from a shared library; called like the built one."""

    def __init__(self, compiled, order: list[int], scalars: list[int], dtypes: list, entry: str):
        self._compiled, self._order, self._scalars = compiled, order, set(scalars)
        self._dtypes = dtypes  # per user argument position, for scalars
        self.entry_name = entry

    def __call__(self, *arrays) -> None:
        if len(arrays) != len(self._order):
            raise TypeError(f"{self.entry_name} takes {len(self._order)} arguments, got {len(arrays)}")
        values = [
            np.array([x], dtype=self._dtypes[n]) if n in self._scalars else x for n, x in enumerate(arrays)
        ]
        self._compiled(*(values[n] for n in self._order))

    def __getitem__(self, name: str) -> LoadedFunction:
        if name != self.entry_name:
            raise KeyError(f"this module has one function, {self.entry_name!r}, not {name!r}")
        return self

    def time_evaluator(self, func_name=None, dev=None, number: int = 10, repeat: int = 1, min_repeat_ms: int = 0, **_):
        from tilecraft.timing import time_calls

        return lambda *arrays: time_calls(lambda: self(*arrays), number, repeat, min_repeat_ms)


def load_module(path) -> LoadedFunction:
    from tilecraft.backends.llvm.jit import ArgSpec, CompiledFunction

    path = str(path)
    manifest_path = path + ".json"
    try:
        manifest = json.loads(Path(manifest_path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(
            f"'{path}' was not saved by tilecraft's export_library: cannot read '{manifest_path}' ({e})"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise ValueError(f"'{manifest_path}' is not a version-{VERSION} tilecraft function manifest")
    try:
        entry = str(manifest["entry"])
        specs = [
            ArgSpec(str(a["name"]), tuple(int(d) for d in a["shape"]), np.dtype(a["dtype"]), bool(a["output"]))
            for a in manifest["args"]
        ]
        order = [int(n) for n in manifest["order"]]
        scalars = [int(n) for n in manifest["scalars"]]
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"'{manifest_path}': malformed manifest ({type(e).__name__}: {e})") from None
    if sorted(order) != list(range(len(specs))) or any(not 0 <= n < len(order) for n in scalars):
        raise ValueError(f"'{manifest_path}': malformed manifest (argument order)")
    try:
        library = ctypes.CDLL(str(Path(path).resolve()))
        address = ctypes.cast(getattr(library, entry), ctypes.c_void_p).value
    except (OSError, AttributeError) as e:
        raise ValueError(f"'{path}': cannot load the function {entry!r}: {e}") from None
    compiled = CompiledFunction(entry, specs, address, library)
    dtypes = [None] * len(order)
    for position, n in enumerate(order):
        dtypes[n] = specs[position].dtype
    return LoadedFunction(compiled, order, scalars, dtypes, entry)
