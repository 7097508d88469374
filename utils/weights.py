"""Weight stores: the arrays that `graph.weight "name"` ops refer to.

Weights stay out of the IR text. A module names its store in the attribute
`graph.weights`: either a `.npz` file (a path relative to the current directory,
or absolute; `tilecraft-import` writes one beside the `.mlir`) or, for a model
compiled in memory, a key `mem:<n>` of a store registered in this process.
Passes that need values (fold-constants, simplify-inference, alter-layout) get
the store with `store_of(module)`, read arrays by name and add new ones with
`add`, which marks the store changed so a tool can save it.
"""

from __future__ import annotations

import itertools
import zipfile
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp, StringAttr

ATTR = "graph.weights"

_memory: dict[str, WeightStore] = {}
_files: dict[Path, WeightStore] = {}
_counter = itertools.count()


class WeightError(Exception):
    """A missing or unreadable weight store or weight."""


class WeightStore:
    def __init__(self, arrays: dict[str, np.ndarray] | None = None, path: Path | None = None):
        self.arrays: dict[str, np.ndarray] = dict(arrays or {})
        self.path = path
        self.changed = False

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.arrays[name]
        except KeyError:
            where = f" ({self.path})" if self.path else ""
            raise WeightError(f"no weight named '{name}' in the weight store{where}") from None

    def __contains__(self, name: str) -> bool:
        return name in self.arrays

    def add(self, array: np.ndarray, hint: str) -> str:
        """Store `array` under a fresh name derived from `hint`; returns the name."""
        name, n = hint, 1
        while name in self.arrays:
            name, n = f"{hint}_{n}", n + 1
        self.arrays[name] = np.ascontiguousarray(array)
        self.changed = True
        return name

    def save(self, path: str | Path) -> None:
        path = Path(path)
        with open(path, "wb") as f:
            np.savez(f, **self.arrays)
        self.path = path.resolve()
        self.changed = False

    @staticmethod
    def load(path: str | Path) -> WeightStore:
        path = Path(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError, zipfile.BadZipFile) as e:
            raise WeightError(f"cannot read weight store '{path}': {e}") from None
        return WeightStore(arrays, path.resolve())


def pass_store(module: ModuleOp, pass_name: str) -> WeightStore | None:
    """`store_of(module)` for a pass: an unreadable store is an error at the module."""
    from tilecraft.utils.diagnostics import OpError

    try:
        return store_of(module)
    except WeightError as e:
        raise OpError(module, f"{pass_name}: {e}") from None


def referenced_names(module: ModuleOp) -> set[str]:
    """The weights `module` names: by `graph.weight` ops and, once the graph
    function is at the loop level, by `tc.weight` arguments."""
    from xdsl.dialects import func

    names: set[str] = set()
    for op in module.walk():
        if op.name == "graph.weight":
            names.add(op.properties["name"].data)  # type: ignore[attr-defined]
        elif isinstance(op, func.FuncOp) and op.arg_attrs is not None:
            for attrs in op.arg_attrs.data:
                weight = attrs.data.get("tc.weight")
                if isinstance(weight, StringAttr):
                    names.add(weight.data)
    return names


def attach(module: ModuleOp, store: WeightStore, path: str | Path | None = None) -> None:
    """Name `store` in `module`: by file path if given (saving it), else in memory."""
    if path is not None:
        store.save(path)
        module.attributes[ATTR] = StringAttr(str(path))
        _files[Path(path).resolve()] = store
        return
    key = f"mem:{next(_counter)}"
    _memory[key] = store
    module.attributes[ATTR] = StringAttr(key)


def store_of(module: ModuleOp) -> WeightStore | None:
    """The store `module` names, or None if it names none."""
    attr = module.attributes.get(ATTR)
    if attr is None:
        return None
    assert isinstance(attr, StringAttr)
    key = attr.data
    if key.startswith("mem:"):
        if key not in _memory:
            raise WeightError(f"weight store '{key}' is not held by this process")
        return _memory[key]
    path = Path(key).resolve()
    if path not in _files:
        _files[path] = WeightStore.load(path)
    return _files[path]
