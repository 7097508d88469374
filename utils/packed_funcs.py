"""Global functions by name: `tvm.register_func` and `tvm.get_global_func`.

`te.extern` stages call them (through `tvm.tir.call_packed("name", ...)`) with
the input and output arrays as NDArrays.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _cblas_matmul(a, b, c, transa=False, transb=False):
    """TVM's `"tvm.contrib.cblas.matmul"`: `c = op(a) @ op(b)`, by numpy (its BLAS)."""
    a = np.asarray(a).T if transa else np.asarray(a)
    b = np.asarray(b).T if transb else np.asarray(b)
    np.matmul(a, b, out=np.asarray(c))


_FUNCTIONS: dict[str, Callable] = {"tvm.contrib.cblas.matmul": _cblas_matmul}


def register_func(name_or_func=None, f: Callable | None = None, override: bool = False):
    """`@tvm.register_func("my.name")`, `@tvm.register_func` (the function's own
    name) or `tvm.register_func("my.name", f)`."""
    if callable(name_or_func) and f is None:
        return register_func(name_or_func.__name__, name_or_func, override)
    if not isinstance(name_or_func, str) or not name_or_func:
        raise ValueError(f"register_func needs a name, not {name_or_func!r}")
    name = name_or_func

    def register(func: Callable) -> Callable:
        if name in _FUNCTIONS and not override:
            raise ValueError(f"global function {name!r} is already registered (pass override=True)")
        _FUNCTIONS[name] = func
        return func

    return register(f) if f is not None else register


def get_global_func(name: str, allow_missing: bool = False) -> Callable | None:
    func = _FUNCTIONS.get(name)
    if func is None and not allow_missing:
        raise ValueError(f"no global function {name!r} is registered (tvm.register_func)")
    return func
