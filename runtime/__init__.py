"""What the driver's results become for the caller: compiled models and functions.

- `compile.py`: `tilecraft.compile`, a `CompiledModel` of what the model compile
  driver (driver/compile_model.py) made;
- `model.py`: `CompiledModel` (one ctypes call per model call);
- `saved.py`: `save` / `load` of a model (shared library, manifest, weights);
- `function.py`: `Function`, what `tilecraft.build` returns for the CPU;
  `loaded_function.py`: one loaded back (`load_module`);
- `accel.py`, `offload.py`: functions and models on the accelerator's simulator;
- `profile.py`, `quantize.py`, `onnx_backend.py`, `onnx_conformance.py`: per-kernel
  times, `tc.quantize`, ONNX's backend API and its conformance runner.
"""

from tilecraft.runtime.compile import compile  # noqa: A004
from tilecraft.runtime.model import CompiledModel
from tilecraft.runtime.saved import load

__all__ = ["compile", "load", "load_module", "CompiledModel"]


def load_module(path):
    """TVM's `tvm.runtime.load_module(path)`: a function saved with
    `tilecraft.build(...).export_library(path)`."""
    from tilecraft.runtime.loaded_function import load_module as load

    return load(path)
