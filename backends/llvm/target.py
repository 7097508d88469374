"""The host as an LLVM target, and LLVM's O3 pipeline for it.

Code is generated for the CPU this process runs on (`get_host_cpu_name()` and
its exact feature list): without them LLVM assumes a baseline x86-64 and emits
SSE2. One more feature matters: LLVM tunes server Intel CPUs to *prefer*
256-bit vectors (`prefer-256-bit`), which splits every 512-bit operation of our
explicitly vectorized loops into two ymm halves. Our kernels are long-running
dense loops, where zmm registers pay off, so the preference is turned off
(`-prefer-256-bit`) when the CPU has AVX-512.

Optimization uses LLVM's new pass manager at O3 with loop and SLP vectorization
on (the default pipeline of `create_pipeline_tuning_options(speed_level=3)`).
`llvm.initialize()` must not be called with llvmlite 0.50 (it raises); native
target and asm printer initialization is enough and happens once.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm


@functools.cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


def host_features() -> str:
    features = llvm.get_host_cpu_features()
    flat = features.flatten()
    if features.get("avx512f"):
        flat += ",-prefer-256-bit"
    return flat


@functools.cache
def native_vector_bits() -> int:
    """The width of this CPU's widest vector registers (512 with AVX-512F, 256 with
    AVX, else 128): LLVM splits a wider vector into pieces of this width."""
    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        return 512
    return 256 if features.get("avx") else 128


def create_host_target_machine(jit: bool = False) -> llvm.TargetMachine:
    """A target machine for this CPU. Position-independent, so objects link into a
    .so. An MCJIT engine takes ownership of its machine, so each JIT gets a new one."""
    _initialize()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(),
        features=host_features(),
        opt=3,
        reloc="pic",
        codemodel="jitdefault" if jit else "default",
        jit=jit,
    )


@functools.cache
def object_target_machine() -> llvm.TargetMachine:
    """The machine for object files the JIT links (`jit.jit_objects`): absolute
    64-bit addresses (large code model, static), which the JIT's linker resolves
    whatever distance it loads two objects apart. (Position-independent large-model
    code addresses its constants from a GOT, which MCJIT's ELF linker gets wrong
    once it has loaded more than one object; the small model's 32-bit offsets
    overflow where the linker puts an object's code and constants far apart.)"""
    _initialize()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    return target.create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=host_features(), opt=3, reloc="static", codemodel="large"
    )


@functools.cache
def host_target_machine() -> llvm.TargetMachine:
    """The shared target machine for optimizing and emitting code."""
    return create_host_target_machine()


def target_description() -> str:
    """What code is generated for: triple, CPU and features (a cache key's part)."""
    return f"{llvm.get_process_triple()} {llvm.get_host_cpu_name()} {host_features()}"


def triple_and_layout() -> tuple[str, str]:
    machine = host_target_machine()
    return machine.triple, str(machine.target_data)


def parse_and_optimize(text: str, optimize: bool = True) -> llvm.ModuleRef:
    """Parse LLVM IR text, verify it, and run O3 for the host on it."""
    from tilecraft.utils.compile_timing import section

    machine = host_target_machine()
    with section("LLVM parse"):
        module = llvm.parse_assembly(text)
        module.verify()
    if optimize and "llvm.loop.unroll.full" in text:
        # Loops marked for full unrolling (unrolled loops of the schedule) are
        # unrolled, and the copies' constant indices folded, before O3, so O3
        # sees straight-line code as if the loop IR had been unrolled: unrolled
        # inside O3 (after LICM), the copies' addresses stay loop-invariant
        # registers, and a GEMM kernel ran up to 20% slower.
        with section("LLVM unroll"):
            builder = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=3))
            manager = llvm.create_new_module_pass_manager()
            manager.add_loop_unroll_pass()
            manager.add_instruction_combine_pass()
            manager.run(module, builder)
    if optimize:
        with section("LLVM optimize"):
            options = llvm.create_pipeline_tuning_options(speed_level=3)
            options.loop_vectorization = True
            options.slp_vectorization = True
            options.loop_unrolling = True
            builder = llvm.create_pass_builder(machine, options)
            builder.getModulePassManager().run(module, builder)
    return module
