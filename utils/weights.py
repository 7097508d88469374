"""Weight stores: the arrays that `graph.weight "name"` ops refer to.

Weights stay out of the IR text. A store is an object that belongs to one
module: `attach(module, store)` hands it over, `store_of(module)` gets it back,
and it lives as long as the module does (a weak reference: no process-wide
registry, nothing to free). A module whose store is a file names it in the
attribute `graph.weights` (a `.npz` path, relative to the current directory or
absolute; `tilecraft-import` writes one beside the `.mlir`), so printed IR
re-parses in another process given that file; a store held only in memory is
named nowhere in the text.

A store read from a file is checked against the module once, when it is
loaded (`check_store`): each array a `graph.weight` op or a `tc.weight`
argument names must have the shape and dtype its type says. A transposed array
has as many elements as the right one, so nothing later would notice it; the
error names the weight, the shape it has and the shape the module takes, at the
op that reads it.

Passes that need values (fold-constants, canonicalize, alter-layout) get
the store with `pass_store(module, pass_name)`, read arrays by name and add new
ones with `add`. They never change what the caller handed in: the pipeline
attaches a `child()` of the caller's store, which reads through to it and keeps
what the passes add to itself.
"""

from __future__ import annotations

import weakref
import zipfile
from collections import ChainMap
from pathlib import Path
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp, StringAttr

if TYPE_CHECKING:  # numpy is imported where arrays are handled: tilecraft-opt on IR
    import numpy as np  # without weights does not pay for it

ATTR = "graph.weights"

# The store of each module object; an entry goes when its module does.
_stores: weakref.WeakKeyDictionary[ModuleOp, WeightStore] = weakref.WeakKeyDictionary()


class WeightError(Exception):
    """A missing or unreadable weight store or weight."""


class WeightStore:
    """Named arrays, optionally over a `parent` store that is read but never written."""

    def __init__(
        self,
        arrays: dict[str, np.ndarray] | None = None,
        path: Path | None = None,
        parent: WeightStore | None = None,
    ):
        self._own: dict[str, np.ndarray] = dict(arrays or {})
        self.path = path
        self.parent = parent
        self.changed = False

    @property
    def arrays(self) -> ChainMap:
        """Every array by name (this store's, then its parent's)."""
        if self.parent is None:
            return ChainMap(self._own)
        return ChainMap(self._own, self.parent.arrays)

    def child(self) -> WeightStore:
        """A store that reads this one and keeps its own additions."""
        return WeightStore(parent=self)

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
        import numpy as np

        name, n = hint, 1
        while name in self.arrays:
            name, n = f"{hint}_{n}", n + 1
        self._own[name] = np.ascontiguousarray(array)
        self.changed = True
        return name

    def save(self, path: str | Path) -> None:
        import numpy as np

        path = Path(path)
        with open(path, "wb") as f:
            np.savez(f, **dict(self.arrays))
        self.path = path.resolve()
        self.changed = False

    @staticmethod
    def load(path: str | Path) -> WeightStore:
        import numpy as np

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
    """Hand `store` to `module`. With `path`, save it there first and name the file
    in the module (`graph.weights`), so the printed IR finds it again."""
    if path is not None:
        store.save(path)
        module.attributes[ATTR] = StringAttr(str(path))
    elif store.path is not None:
        module.attributes.setdefault(ATTR, StringAttr(str(store.path)))
    elif ATTR in module.attributes:
        del module.attributes[ATTR]  # a file it no longer uses
    _stores[module] = store


def store_of(module: ModuleOp) -> WeightStore | None:
    """The store of `module`: the one attached to it, else the file it names
    (loaded once, then attached), else None."""
    store = _stores.get(module)
    if store is not None:
        return store
    attr = module.attributes.get(ATTR)
    if attr is None:
        return None
    if not isinstance(attr, StringAttr):
        raise WeightError(f"the module attribute {ATTR} must name a .npz file as a string, got {attr}")
    store = WeightStore.load(attr.data)
    check_store(module, store)
    _stores[module] = store
    return store


def mismatch(name: str, array: np.ndarray, shape: tuple[int, ...], dtype: np.dtype,
             path: Path | None = None) -> str | None:
    """Why `array` cannot be the weight `name` of `shape` and `dtype`, or None.
    The shape must be exactly `shape`: a transposed array holds as many elements
    in another order. Only a one-element array may differ in rank (a scalar
    weight is a one-element buffer)."""
    import numpy as np

    same_shape = tuple(array.shape) == tuple(shape) or (array.size == 1 and int(np.prod(shape)) == 1)
    if same_shape and array.dtype == dtype:
        return None
    where = f" in '{path}'" if path is not None else ""
    hint = ""
    if array.size == int(np.prod(shape)) and not same_shape and array.ndim == len(shape):
        hint = " (as many elements in another shape: transposed?)"
    return (f"weight '{name}'{where} is {array.dtype}{list(array.shape)}, "
            f"the module takes {dtype}{list(shape)}{hint}")


def check_store(module: ModuleOp, store: WeightStore) -> None:
    """Each array of `store` that `module` names has the shape and dtype the
    module gives it; else an error at the op (or function) that names it. A name
    the store lacks is left to the reader (it says "no weight named")."""
    import numpy as np
    from xdsl.dialects import func
    from xdsl.dialects.builtin import MemRefType, TensorType

    from tilecraft.utils.diagnostics import OpError
    from tilecraft.utils.dtypes import numpy_dtype

    arrays = store.arrays
    for op in module.walk():
        named = []  # (name, its type, what to say before the message)
        if op.name == "graph.weight":
            named.append((op.properties["name"].data, op.results[0].type, ""))  # type: ignore[attr-defined]
        elif isinstance(op, func.FuncOp) and op.arg_attrs is not None:
            for n, (attrs, arg) in enumerate(zip(op.arg_attrs.data, op.args)):
                weight = attrs.data.get("tc.weight")
                if isinstance(weight, StringAttr):
                    named.append((weight.data, arg.type, f"argument #{n + 1} of @{op.sym_name.data}: "))
        for name, t, prefix in named:
            if name not in arrays or not isinstance(t, (TensorType, MemRefType)) or not t.has_static_shape():
                continue
            try:
                dtype = numpy_dtype(t)
            except ValueError:
                continue  # an element type numpy cannot hold is refused where it is compiled
            problem = mismatch(name, np.asarray(arrays[name]), tuple(t.get_shape()), dtype, store.path)
            if problem is not None:
                raise OpError(op, prefix + problem)
