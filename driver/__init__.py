"""The driver: what turns a model or a te schedule into native code, by running
the named pipelines (pipelines/) and the LLVM backend (backends/llvm/).

- `context.py`: the xDSL context of every dialect, parsing, te to loops;
- `compile_model.py`: a model (ONNX, `.mlir`, graph module) through
  compile-model and LLVM, with the compile cache: a `ModelBuild`, which
  `tilecraft.compile` wraps in a `CompiledModel` (runtime/);
- `te_function.py`: a te schedule's build path (`tilecraft.lower`,
  `tilecraft.build`), one compiled form per set of `te.var` sizes;
  `te_pieces.py` runs one that `te.extern` or `te.scan` cuts into parts;
  `te_library.py` saves one (`.so`, `.o` and a manifest);
- `kernels.py`: loop IR to native code, whole or kernel by kernel (one cached
  object per distinct kernel, compiled in parallel);
- `emit.py`: loop IR as LLVM IR, assembly, an object, a shared library;
- `ports.py`: `Port`, one argument of a model's native entry point.

The runtime (runtime/) holds what the driver's results become for the caller:
compiled models and functions, saved and loaded.
"""
