"""`loop-vectorize`: a `loop.for ... vectorized` becomes vector code, in IR.

A vectorized loop of constant extent W is written once, with every value that
depends on the loop variable held as a `vector<W x T>` (one lane per iteration)
and every other value kept as a scalar and broadcast where it meets a vector
(the way TVM vectorizes). While writing, each loop-level value has one of three
forms:

- a plain value: *uniform*, the same in every lane (a scalar);
- `Affine(base, stride)`: an index that is `base + stride * lane` (the loop
  variable is `Affine(lb, 1)`; `addi`/`subi`/`muli` by a constant keep the form).
  This is what makes an access `A[i, uniform + j]` recognisably contiguous;
- `Vec(value)`: anything else, a real vector.

Affine values become vectors only when something needs one
(`broadcast(base) + dense<[0, stride, 2 * stride, ...]>`).

| access, per-lane part | load                         | store                     |
|-----------------------|------------------------------|---------------------------|
| none (uniform)        | `memref.load` (stays scalar) | `memref.store`            |
| `lane` (stride 1)     | `vector.load`                | `vector.store`            |
| under a mask          | `vector.maskedload`          | `vector.maskedstore`      |
| anything else         | `loop.gather`                | `loop.scatter`            |

Lane-wise arithmetic is `arith`/`math` on vectors where xDSL 0.74's ops accept
vectors; comparisons, selects and integer/float conversions, which it restricts
to scalars, are written with the LLVM dialect's vector forms (`llvm.icmp`,
`llvmx.fcmp`, `llvmx.select`, `llvm.sext`, ...). Index lanes are `i64` (what
`index` becomes in LLVM), so they meet those ops as they are.

A `loop.assert` whose condition varies across lanes becomes one scalar check that
no active lane fails (the failing lanes' mask bits, as one integer, are 0).

Conditions that vary across lanes (`loop.guard`, `scf.if`) do not branch: they
narrow the *mask* of active lanes (`arith.andi` of `vector<W x i1>`), memory
access under a mask is masked (a load from a uniform address is one scalar load
under `scf.if` any lane is active; a store to one is a scatter with the same
offset in every lane: a scatter writes lanes in order, so the last active lane
wins, as in the serial loop), `scf.if` results are
`arith.select`ed, and an integer division under a mask divides inactive lanes by
one so they cannot trap. Uniform conditions stay `loop.guard`/`scf.if`. Loops
inside the vectorized one run serially (their variable is uniform); unrolled
ones stay unrolled.

A loop whose extent is larger than `max_lanes` (4 zmm registers' worth, or
`max-vector-bytes`: 16 on a GPU) is strip
mined: a serial loop over full vectors, then one vector for the tail. Every
vector has a power-of-two width: a tail (or a whole loop) of 12 is a 16-lane
vector whose last 4 lanes are masked off, as a guard would mask them.

```mlir
loop.for %j = 0 to 16 vectorized {
  %a = memref.load %A[%i, %j] : memref<4x16xf32>
  %b = arith.mulf %a, %x : f32
  memref.store %b, %B[%i, %j] : memref<4x16xf32>
}
```
becomes
```mlir
%c0 = arith.constant 0 : index
%a = vector.load %A[%i, %c0] : memref<4x16xf32>, vector<16xf32>
%x16 = vector.broadcast %x : f32 to vector<16xf32>
%b = arith.mulf %a, %x16 : vector<16xf32>
vector.store %b, %B[%i, %c0] : memref<4x16xf32>, vector<16xf32>
```

A loop is made serial instead (still correct, and LLVM's own vectorizer may
take it) when its lanes would not be independent: it allocates a buffer (one
per lane would be needed), or it stores to one address from every lane (a
reduction into a scalar, where each iteration reads the previous one's result).
A call or a launch in a vectorized loop is an error.

The package: `legality.py` decides which loops can be vector code (run over the
module first, so an error comes before anything changes), `values.py` holds the
three forms, `writer.py` writes a loop op by op and `memory.py` its loads and
stores; the pattern `VectorizeLoop` applies it to each vectorized loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from tilecraft.dialects.loop import (
    ForOp,
    LoopKind,
    LoopKindAttr,
)
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from tilecraft.analysis.vectorize_legality import MAX_VECTOR_BYTES, check_vectorizable, vectorization_blocker
from xdsl.utils.exceptions import PassFailedException
from tilecraft.transforms.loop_vectorize.writer import VectorWriter


@dataclass
class VectorizeLoop(RewritePattern):
    """`loop.for ... vectorized` → vector code, or a serial loop if its lanes
    are not independent."""

    max_bytes: int = MAX_VECTOR_BYTES

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ForOp, rewriter: PatternRewriter) -> None:
        if op.kind.data != LoopKind.VECTORIZED:
            return
        if op.extent > 1 and vectorization_blocker(op) is None:
            VectorWriter(op, self.max_bytes).write_loop()
            rewriter.erase(op)
            return
        op.kind = LoopKindAttr(LoopKind.SERIAL)
        rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class LoopVectorizePass(ModulePass):
    """Write every `loop.for ... vectorized` as vector code."""

    name = "loop-vectorize"

    max_vector_bytes: int = MAX_VECTOR_BYTES
    """The widest vector, in bytes: wider loops are strip mined (16 on a GPU,
    whose widest load per thread is `ld.v4.f32`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_vector_bytes < 1:
            raise PassFailedException(f"{self.name}: max-vector-bytes must be positive, not {self.max_vector_bytes}")
        check_vectorizable(op)
        walker = PatternRewriteWalker(VectorizeLoop(self.max_vector_bytes), apply_recursively=False)
        walker.rewrite_module(op)
