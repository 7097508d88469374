"""`tilecraft.contrib`: the parts of TVM's `tvm.contrib` that its CPU tutorials use.

`cblas.matmul(A, B)` is a `te.extern` calling the registered function
`"tvm.contrib.cblas.matmul"`, which tilecraft provides through numpy (its BLAS).
"""

from __future__ import annotations

import types

import numpy as np

from tilecraft.compat import UnsupportedError
from tilecraft.ffi import get_global_func, register_func


def _cblas_matmul(a, b, c, transa=False, transb=False):
    """`C = op(A) @ op(B)`, written into `c`."""
    a = np.asarray(a).T if transa else np.asarray(a)
    b = np.asarray(b).T if transb else np.asarray(b)
    np.matmul(a, b, out=np.asarray(c))


if get_global_func("tvm.contrib.cblas.matmul", allow_missing=True) is None:
    register_func("tvm.contrib.cblas.matmul", _cblas_matmul)


def _matmul(lhs, rhs, transa=False, transb=False, **_):
    from tilecraft import tir
    from tilecraft.frontends import te

    n = lhs.shape[1] if transa else lhs.shape[0]
    m = rhs.shape[0] if transb else rhs.shape[1]
    return te.extern(
        (n, m),
        [lhs, rhs],
        lambda ins, outs: tir.call_packed("tvm.contrib.cblas.matmul", ins[0], ins[1], outs[0], transa, transb),
        name="C",
        dtype=lhs.dtype,
    )


cblas = types.SimpleNamespace(matmul=_matmul)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedError(f"tvm.contrib.{name} is not supported by tilecraft (only contrib.cblas.matmul)")
