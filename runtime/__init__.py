"""Compiled models: `tilecraft.compile(model)` and `tilecraft.runtime.load(path)`.

- `pipeline.py`: the graph passes and convert-graph-to-te, kernels split out;
- `plan.py`: buffers and kernel calls as plain data (and the memory-plan check);
- `model.py`: `CompiledModel` and its executor (ctypes calls on raw pointers);
- `compile.py`: `compile`; `saved.py`: `save` / `load` (shared library + JSON).
"""

from tilecraft.runtime.compile import compile  # noqa: A004
from tilecraft.runtime.model import CompiledModel
from tilecraft.runtime.saved import load

__all__ = ["compile", "load", "CompiledModel"]
