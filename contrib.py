"""`tilecraft.contrib`: the parts of TVM's `tvm.contrib` that its CPU tutorials use.

`cblas.matmul(A, B)` is a `te.extern` calling the registered function
`"tvm.contrib.cblas.matmul"`, which `tilecraft.ffi` provides through numpy (its BLAS).
"""

from __future__ import annotations

import types

from tilecraft.compat import UnsupportedError


def _matmul(lhs, rhs, transa=False, transb=False, **_):
    from tilecraft.frontends import te
    from tilecraft.frontends.te.extern import call_packed

    n = lhs.shape[1] if transa else lhs.shape[0]
    m = rhs.shape[0] if transb else rhs.shape[1]
    return te.extern(
        (n, m),
        [lhs, rhs],
        lambda ins, outs: call_packed("tvm.contrib.cblas.matmul", ins[0], ins[1], outs[0], transa, transb),
        name="C",
        dtype=lhs.dtype,
    )


cblas = types.SimpleNamespace(matmul=_matmul)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedError(f"tvm.contrib.{name} is not supported by tilecraft (only contrib.cblas.matmul)")
