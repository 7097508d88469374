"""Ahead-of-time output: LLVM IR text, assembly, an object file, a shared library.

All four go through the same lowering and O3 as the JIT (`compile.py`), for the
host CPU. Parallel loops use the *pool* runtime here (threads of the module's
own, started by the first launch; see runtime.py), so an object or shared
library needs nothing but libc (and links with `cc -shared` or plain `ld`). The
pool's threads run the library's code while they wait for the next launch, so
the shared library is linked `-z nodelete`: dlclose leaves it mapped.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from tilecraft.backends.llvm.compile import build_llvm_module
from tilecraft.backends.llvm.target import host_target_machine
from xdsl.dialects.builtin import ModuleOp

AOT_RUNTIME = "pool"


class LinkError(Exception):
    """The object could not be linked into a shared library."""


def emit_llvm_ir(module: ModuleOp, optimize: bool = True, num_threads: int | None = None) -> str:
    """The module as LLVM IR text, after O3 unless `optimize` is False."""
    return str(build_llvm_module(module, AOT_RUNTIME, num_threads, optimize=optimize))


def emit_assembly(module: ModuleOp, num_threads: int | None = None) -> str:
    return host_target_machine().emit_assembly(build_llvm_module(module, AOT_RUNTIME, num_threads))


def emit_object(module: ModuleOp, num_threads: int | None = None) -> bytes:
    return host_target_machine().emit_object(build_llvm_module(module, AOT_RUNTIME, num_threads))


def emit_shared_library(module: ModuleOp, path: str | Path, num_threads: int | None = None) -> None:
    """Compile `module` into the shared library `path` (cc -shared, else ld -shared)."""
    data = emit_object(module, num_threads)
    with tempfile.TemporaryDirectory() as tmp:
        obj = Path(tmp) / "module.o"
        obj.write_bytes(data)
        if cc := shutil.which("cc") or shutil.which("gcc") or shutil.which("clang"):
            command = [cc, "-shared", "-Wl,-z,nodelete", "-o", str(path), str(obj), "-lpthread"]
        elif ld := shutil.which("ld") or shutil.which("ld.lld"):
            command = [ld, "-shared", "-z", "nodelete", "-o", str(path), str(obj)]
        else:
            raise LinkError(
                "linking a shared library needs a C compiler (cc) or a linker (ld) on PATH"
            )
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise LinkError(f"'{' '.join(command)}' failed: {done.stderr.strip()}")
