"""`tilecraft.contrib`: the parts of TVM's `tvm.contrib` that its CPU tutorials use.

`cblas.matmul(A, B)` is a `te.extern` calling the registered function
`"tvm.contrib.cblas.matmul"`, which `utils/packed_funcs.py` provides through numpy (its BLAS);
`utils.tempdir()` and `cc.create_shared(so, [objects])` serve saving functions.
"""

from __future__ import annotations

import types

from tilecraft.utils.unsupported import UnsupportedError


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


class TempDirectory:
    """`tvm.contrib.utils.tempdir()`: a temporary directory, removed with the object."""

    def __init__(self):
        import tempfile

        self._handle = tempfile.TemporaryDirectory(prefix="tilecraft-")
        self.temp_dir = self._handle.name

    def relpath(self, name: str) -> str:
        import os

        return os.path.join(self.temp_dir, name)

    def listdir(self) -> list[str]:
        import os

        return sorted(os.listdir(self.temp_dir))


def _create_shared(output: str, objects, options=None, cc: str | None = None, **_):
    """`tvm.contrib.cc.create_shared(output, [objects])`: link objects into a shared
    library with the system C compiler; a te function's manifest comes along."""
    import shutil
    import subprocess

    from tilecraft.driver.te_library import link_manifest

    objects = [objects] if isinstance(objects, str) else list(objects)
    compiler = cc or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        raise RuntimeError("create_shared needs a C compiler (cc) on PATH")
    command = [compiler, "-shared", "-o", str(output), *map(str, objects), *(options or [])]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"'{' '.join(command)}' failed: {done.stderr.strip()}")
    link_manifest(str(output), objects)


utils = types.SimpleNamespace(tempdir=TempDirectory)
cc = types.SimpleNamespace(create_shared=_create_shared)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedError(
        f"tvm.contrib.{name} is not supported by tilecraft (it has contrib.cblas.matmul, "
        "contrib.utils.tempdir and contrib.cc.create_shared)"
    )
