"""From a loop-level (or llvm-level) module to an optimized LLVM module.

The steps every entry point shares (JIT, `.ll`, `.s`, `.o`, `.so`):

1. the pipeline `loop-to-llvm` (`pipelines/loop_to_llvm.py`: `loop-unroll`,
   `loop-outline-parallel`, `loop-vectorize`, `convert-loop-to-llvm`) on a clone
   (the caller's module stays as it was), unless the module is already made of
   `llvm.func`s: `tilecraft-opt -p loop-to-llvm` prints what the JIT compiles;
2. translation to llvmlite IR (`translate.py`) for the host's triple and data
   layout, plus the parallel runtime if a parallel loop needs it (`runtime.py`);
3. parsing and O3 for the host CPU (`target.py`).

`CompileTimes` records how long each step took: xDSL is Python and the slow
part, LLVM is C++; keeping both visible keeps them honest.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import llvmlite.binding as llvm_binding
from tilecraft.backends.llvm.halfconv import add_half_conversions
from tilecraft.backends.llvm.runtime import add_parallel_runtime
from tilecraft.backends.llvm.target import parse_and_optimize, triple_and_layout
from tilecraft.backends.llvm.translate import translate_module
from tilecraft.utils.compile_timing import section
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp


@dataclass
class CompileTimes:
    """Seconds spent in each step of the last compilation (`lower`: `loop-to-llvm`)."""

    lower: float = 0.0
    translate: float = 0.0
    llvm: float = 0.0
    steps: dict[str, float] = field(default_factory=dict)

    def __str__(self) -> str:
        return (
            f"loop to llvm dialect {self.lower * 1e3:.1f} ms, "
            f"translate {self.translate * 1e3:.1f} ms, LLVM {self.llvm * 1e3:.1f} ms"
        )


_built = [0]


def modules_built() -> int:
    """How many modules this process has translated and optimized (the count a
    test reads to show that calls compile nothing)."""
    return _built[0]


def build_llvm_module(
    module: ModuleOp,
    runtime: str,
    threads: int | None = None,
    optimize: bool = True,
    times: CompileTimes | None = None,
    entry_points: bool | None = None,
) -> llvm_binding.ModuleRef:
    """Translate and optimize `module`, in xDSL's llvm dialect (loop IR goes through
    `pipelines.loop_to_llvm.lower_to_llvm_dialect` first, as `tilecraft.driver`
    does); `runtime` and `entry_points` are `runtime.add_parallel_runtime`'s."""
    if any(isinstance(op, func.FuncOp) for op in module.ops):
        raise ValueError(
            "the LLVM backend takes the llvm dialect; lower loop IR with -p loop-to-llvm "
            "first (tilecraft.driver.kernels.compile_loop_module does)"
        )
    times = times if times is not None else CompileTimes()
    _built[0] += 1
    start = time.perf_counter()
    with section("translate"):
        triple, layout = triple_and_layout()
        ir_module = translate_module(module, triple, layout)
        add_parallel_runtime(ir_module, runtime, threads, entry_points)
        text = add_half_conversions(str(ir_module))
    times.translate = time.perf_counter() - start

    start = time.perf_counter()
    result = parse_and_optimize(text, optimize)
    times.llvm = time.perf_counter() - start
    return result
