"""Device kernels in xDSL's `llvm` dialect → PTX, through llvmlite's NVPTX target.

`convert-gpu-to-nvvm` leaves each `gpu.module` holding `llvm.func`s: the kernels
(marked `gpu.kernel`) take generic pointers, as the CPU lowering writes them.
Here each kernel becomes

- an internal, always-inlined body (the translated function, renamed
  `<kernel>__body`), and
- the entry point under the kernel's own name, in LLVM's `ptx_kernel` calling
  convention (what makes it a PTX `.entry` in LLVM 22; the older
  `nvvm.annotations` metadata is no longer read for that), whose pointer
  parameters are in the *global* address space (1) and cast to generic ones
  for the body. After inlining, LLVM's address-space inference turns the body's
  loads and stores into `ld.global`/`st.global`.

The module is optimized with LLVM's O3 pipeline for the NVPTX target machine
and printed as PTX for the architecture asked (`sm_80` unless the driver or the
target string names another). The PTX ISA version is the lowest that the
architecture needs, so older drivers load it too.
"""

from __future__ import annotations

import functools
import re

import llvmlite.binding as llvm
from llvmlite import ir
from xdsl.dialects import gpu
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import ModuleOp, StringAttr

from tilecraft.backends.llvm.translate import translate_module

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_80"  # for machines without a driver: Ampere and newer run it
KERNEL_ATTR = "gpu.kernel"

# The lowest PTX ISA version each architecture needs (PTX ISA notes, "Target ISA").
_PTX_FOR_ARCH = [(100, "ptx86"), (90, "ptx78"), (89, "ptx78"), (87, "ptx74"), (86, "ptx71"), (80, "ptx70")]


class PtxError(ValueError):
    """An architecture LLVM cannot target, or a kernel LLVM cannot compile."""


def parse_arch(arch: str) -> str:
    """`sm_90` (also `90`, `sm90`) → "sm_90"; anything else is an error that says so."""
    match = re.fullmatch(r"(?:sm_?)?(\d{2,3})a?", arch.strip())
    if match is None or int(match.group(1)) < 50:
        raise PtxError(f"cuda target: {arch!r} is not an NVIDIA architecture such as sm_80 or sm_90 (sm_50 and newer)")
    return f"sm_{match.group(1)}"


def ptx_features(arch: str) -> str:
    number = int(arch[3:])
    for lowest, feature in _PTX_FOR_ARCH:
        if number >= lowest:
            return "+" + feature
    return "+ptx64"


@functools.cache
def _initialize() -> None:
    # The native initializers of backends/llvm/target.py only set up the host's target.
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


@functools.cache
def target_machine(arch: str) -> llvm.TargetMachine:
    _initialize()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=arch, features=ptx_features(arch), opt=3)


def device_module(kernels: gpu.ModuleOp) -> ModuleOp:
    """A builtin module holding copies of a lowered `gpu.module`'s `llvm.func`s."""
    return ModuleOp([op.clone() for op in kernels.body.block.ops])


def emit_ptx(device_module: ModuleOp, arch: str = DEFAULT_ARCH, optimize: bool = True) -> str:
    """PTX for the `llvm.func`s of `device_module` (kernels marked `gpu.kernel`)."""
    return target_machine(arch).emit_assembly(llvm_module(device_module, arch, optimize))


def llvm_ir(device_module: ModuleOp, arch: str = DEFAULT_ARCH) -> str:
    """The NVPTX LLVM IR text of `device_module`, before optimization."""
    return str(_wrapped(device_module, arch))


def llvm_module(device_module: ModuleOp, arch: str = DEFAULT_ARCH, optimize: bool = True) -> llvm.ModuleRef:
    machine = target_machine(arch)
    module = llvm.parse_assembly(str(_wrapped(device_module, arch)))
    module.verify()
    if optimize:
        options = llvm.create_pipeline_tuning_options(speed_level=3)
        builder = llvm.create_pass_builder(machine, options)
        builder.getModulePassManager().run(module, builder)
    return module


def _wrapped(device_module: ModuleOp, arch: str) -> ir.Module:
    module = device_module.clone()
    kernels = []
    for op in module.ops:
        if isinstance(op, llvm_dialect.FuncOp) and KERNEL_ATTR in op.attributes:
            name = op.sym_name.data
            kernels.append(name)
            op.sym_name = StringAttr(f"{name}__body")
            op.linkage = llvm_dialect.LinkageAttr("internal")
    translated = translate_module(module, TRIPLE, str(target_machine(arch).target_data))
    for name in kernels:
        _entry_point(translated, name)
    return translated


def _entry_point(module: ir.Module, name: str) -> None:
    """`define ptx_kernel void @name(ptr addrspace(1) ...)` calling `@name__body`."""
    body = module.get_global(f"{name}__body")
    body.attributes.add("alwaysinline")
    params = [ir.PointerType(addrspace=1) if isinstance(a.type, ir.PointerType) else a.type for a in body.args]
    entry = ir.Function(module, ir.FunctionType(ir.VoidType(), params), name=name)
    entry.calling_convention = "ptx_kernel"
    for argument in entry.args:
        if isinstance(argument.type, ir.PointerType):
            argument.add_attribute("noalias")  # (distinct loop-level buffers never overlap)
    builder = ir.IRBuilder(entry.append_basic_block("entry"))
    args = [
        builder.addrspacecast(a, ir.PointerType()) if isinstance(a.type, ir.PointerType) else a for a in entry.args
    ]
    builder.call(body, args)
    builder.ret_void()
