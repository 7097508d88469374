"""The LLVM backend: loop-level IR to native code for the host CPU.

```
loop IR ──convert-loop-to-llvm──▶ llvm (+ llvmx) dialect ──translate.py──▶ llvmlite IR
        (vectorize.py, memory.py, ops.py, parallel.py)      (+ runtime.py: parallel launch)
    ──target.py: O3 for the host CPU──▶ JIT (jit.py) │ .ll/.s/.o/.so (emit.py)
```

Public API:
- `compile_loop_module(module) -> JitModule`; `JitModule[name]` is a
  `CompiledFunction` called with numpy arrays (checked, zero-copy);
- `emit_llvm_ir`, `emit_assembly`, `emit_object`, `emit_shared_library`.
"""

from tilecraft.backends.llvm.emit import (
    LinkError,
    emit_assembly,
    emit_llvm_ir,
    emit_object,
    emit_shared_library,
)
from tilecraft.backends.llvm.jit import CompiledFunction, JitModule, compile_loop_module

__all__ = [
    "CompiledFunction",
    "JitModule",
    "LinkError",
    "compile_loop_module",
    "emit_assembly",
    "emit_llvm_ir",
    "emit_object",
    "emit_shared_library",
]
