"""convert-loop-to-accel: a loop function for the accelerator becomes an `accel.program`.

The input is what a VTA-style schedule lowers to once `inject-dma` and
`inject-virtual-threads` have run: loops over tiles (the host's part), buffers in
the accelerator's scopes (`loop.alloc ... inp_buffer|wgt_buffer|acc_buffer`),
`loop.dma` copies in and out of them, the GEMM intrinsic (`loop.tensor_intrin`
of an intrinsic with an "accel" lowering), the reduction's zero-fill of the
accumulator and elementwise integer math on it (the requantizing epilogue). The
accelerator runs a straight instruction stream, so the host loops are unrolled
here, as VTA's runtime does when the host code runs:

- each `loop.alloc` in an accelerator scope gets an SRAM range (in elements; the
  stack of the enclosing block, so a buffer allocated in a loop body reuses its
  range every iteration: what makes the dependences between iterations real, and
  what virtual threads' separate buffers avoid);
- a `loop.dma` is a LOAD (into inp/wgt/acc) or a STORE (from the accumulator's
  output buffer), its DRAM address the function argument's place in the DRAM
  layout plus the offset, in elements of the memory type;
- a *compute nest* — perfectly nested loops around one GEMM intrinsic, one store
  of 0 into an accumulator buffer, or one elementwise store into one — becomes
  as few instructions as possible: its index functions are affine in the nest's
  loop variables (checked on corners and sample points: anything else is unrolled
  further), the two longest loops become the instruction's iter_out/iter_in with
  their factors, the others are enumerated into a micro-op kernel (named by its
  content, so an identical kernel is one kernel: the backend loads it once while
  it stays resident);
- a zero-fill is a GEMM with `reset`; an elementwise chain (`v = acc[i]; v = v + b[j];
  v = max(v, 0); v = (v + h) // 2^s; v = min(max(v, -128), 127); out[i] = trunc(v)`)
  is one ALU instruction per operation (ADD, MAX, MIN, SHR, MUL with an immediate
  or another accumulator buffer's element), computed in place; when the chain
  writes another buffer than it reads, that buffer is zeroed (GEMM reset) and the
  source added into it first. The narrowing to int8 is the STORE's.

Dependences are not decided here: the program has no tokens, and
`insert-dependences` adds the flags from what each instruction touches.
The program takes the function's name; its `accel.buffer`s are the function's
arguments, in order, named by `tc.name` (the runtime binds arrays by them).

Anything else in the function (a CPU-only op, a global buffer allocated inside,
an index that the accelerator cannot address) is an error at that op.

The package: `buffers.py` lays out the arguments, `affine.py` and `chains.py` are
the analyses of index functions and statements, `program.py` walks the function
(host loops unrolled) and emits each statement, `alu.py` the elementwise ones.
It is a code generator that evaluates the host loops, not a set of rewrite
patterns: one accelerator program replaces the whole function.
"""

from __future__ import annotations

from dataclasses import dataclass
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from tilecraft.backends.accel.spec import default_spec, load_spec
from tilecraft.lowering.convert_loop_to_accel.program import PASS, _Lowering


@dataclass(frozen=True)
class ConvertLoopToAccelPass(ModulePass):
    """Every loop function of the module becomes an accel.program of the same name."""

    name = PASS

    spec: str = ""  # a spec file (JSON or TOML); VTA's default when empty

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        spec = load_spec(self.spec) if self.spec else default_spec()
        for f in [f for f in op.ops if isinstance(f, func.FuncOp) and not f.is_declaration]:
            program = _Lowering(f, spec).run()
            Rewriter.replace_op(f, program)
