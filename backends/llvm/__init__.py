"""The LLVM backend: xDSL's llvm dialect to native code for the host CPU.

```
llvm (+ llvmx) dialect ──translate.py──▶ llvmlite IR (+ runtime.py: parallel launch)
    ──target.py: O3 for the host CPU──▶ JIT (jit.py) │ .ll/.s/.o/.so (emit.py)
```

It takes modules that `loop-to-llvm` (lowering/) produced, and imports no
lowering; `tilecraft.compiler` has the loop-level entry points
(`compile_loop_module`, `emit_*` of a loop module).

Public API:
- `jit_module(llvm_module, signatures) -> JitModule`; `JitModule[name]` is a
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
from tilecraft.backends.llvm.jit import CompiledFunction, JitModule, jit_module, signatures_of

__all__ = [
    "CompiledFunction",
    "JitModule",
    "LinkError",
    "jit_module",
    "signatures_of",
    "emit_assembly",
    "emit_llvm_ir",
    "emit_object",
    "emit_shared_library",
]
