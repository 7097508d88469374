"""Compiled models: `tilecraft.compile(model)` and `tilecraft.runtime.load(path)`.

- `compile.py`: `compile` runs the compile-model pipeline and JIT-compiles the
  loop-level `@main` into one native entry point;
- `model.py`: `CompiledModel` (one ctypes call per model call) and its `Port`s;
- `saved.py`: `save` / `load` (shared library, manifest, weights).
"""

from tilecraft.runtime.compile import compile  # noqa: A004
from tilecraft.runtime.model import CompiledModel
from tilecraft.runtime.saved import load

__all__ = ["compile", "load", "load_module", "CompiledModel"]


def load_module(path):
    """TVM's `tvm.runtime.load_module(path)`: a function saved with
    `tilecraft.build(...).export_library(path)`."""
    from tilecraft.te_library import load_module as load

    return load(path)
