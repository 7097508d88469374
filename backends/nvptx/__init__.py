"""The NVPTX backend: kernels in xDSL's `llvm` dialect → PTX text, through
llvmlite's NVPTX target (no CUDA toolkit; the driver JIT-compiles the PTX).
See `codegen.py`."""

from tilecraft.backends.nvptx.codegen import DEFAULT_ARCH, device_module, emit_ptx, parse_arch

__all__ = ["DEFAULT_ARCH", "device_module", "emit_ptx", "parse_arch"]
