"""`tilecraft.runtime.load_module(path)`: a te function saved with
`export_library` (driver/te_library.py: the library and its manifest), loaded and
called like the built one.
"""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import numpy as np

from tilecraft.driver.te_library import FORMAT, VERSION
from tilecraft.utils.symbolic import SymbolicSizeError, bind


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
            if self._matches(values, by_position):
                return compiled, by_position
        shapes = ", ".join(str(np.shape(x)) for x in values)
        raise ValueError(
            f"{self.entry_name} was saved for the sizes it had been called with; none "
            f"matches these arrays ({shapes})"
        )

    def _matches(self, values, by_position) -> bool:
        """Whether the arrays have the shapes of a variant (`?` sizes: any that agree)."""
        bindings: dict[str, int] = {}
        for n, x in enumerate(values):
            if n in self._scalars:
                continue
            if not isinstance(x, np.ndarray):
                return False
            try:
                bindings = bind(by_position[n].shape, x.shape, by_position[n].name, bindings)
            except SymbolicSizeError:
                return False
        return True

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
    from tilecraft.backends.llvm.jit import ArgSpec, CompiledFunction, shape_from_json

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
                [ArgSpec(str(a["name"]), shape_from_json(a["shape"]), np.dtype(a["dtype"]), bool(a["output"]))
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
