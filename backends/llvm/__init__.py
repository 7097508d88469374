"""The LLVM backend: xDSL's llvm dialect to native code for the host CPU.

```
llvm (+ llvmx) dialect ──translate.py──▶ llvmlite IR (+ runtime.py: parallel launch)
    ──target.py: O3 for the host CPU──▶ JIT (jit.py) │ .ll/.s/.o/.so (emit.py)
```

It takes modules that `loop-to-llvm` (lowering/) produced, and imports no
lowering; `tilecraft.driver` has the loop-level entry points
(`compile_loop_module`, `emit_*` of a loop module).

Public API:
- `jit_module(llvm_module, signatures) -> JitModule`; `JitModule[name]` is a
  `CompiledFunction` called with numpy arrays (checked, zero-copy);
- `emit_llvm_ir`, `emit_assembly`, `emit_object`, `emit_shared_library`.
"""

# The names below are imported on first use (PEP 562), so that importing a
# submodule (the llvmx dialect, when a tool parses llvm-level IR) does not load
# llvmlite and the JIT with it.
_EXPORTS = {
    "CompiledFunction": "jit",
    "JitModule": "jit",
    "LinkError": "emit",
    "jit_module": "jit",
    "signatures_of": "jit",
    "emit_assembly": "emit",
    "emit_llvm_ir": "emit",
    "emit_object": "emit",
    "emit_shared_library": "emit",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
