"""The built-in tensor intrinsics, declared with `te.decl_tensor_intrin`.

They are registered the first time an intrinsic is looked up by name, so IR
text that names them (`sched.tensorize %x with "gemm_4x16x8_f32"`) replays
without Python code declaring them first.

- `gemm_4x16x8_f32`: `C[4x16] += A[4x8] * B[8x16]` in float32: on the CPU a
  register-tile micro-kernel (the 16-wide j axis is one vector, i and k are
  unrolled: 32 vector FMAs per call);
- `gemv_1x16x16_i8`: `C[1x16] += A[1x16] * W[16x16]^T`, int8 x int8 summed in
  int32: the shape of VTA's GEMM core at its default spec (BATCH 1, BLOCK 16),
  here lowered for the CPU.
"""

from __future__ import annotations


def gemm_f32(m: int, n: int, k: int, name: str):
    from tilecraft import te

    A = te.placeholder((m, k), "float32", name="A")
    B = te.placeholder((k, n), "float32", name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.decl_tensor_intrin(C.op, lambda ins, outs: {"llvm": te.LoopKernel()}, name=name)


def gemv_i8(batch: int, block: int, name: str):
    from tilecraft import te

    A = te.placeholder((batch, block), "int8", name="A")
    W = te.placeholder((block, block), "int8", name="W")
    r = te.reduce_axis((0, block), name="k")
    C = te.compute(
        (batch, block),
        lambda i, j: te.sum(A[i, r].astype("int32") * W[j, r].astype("int32"), axis=r),
        name="C",
    )
    return te.decl_tensor_intrin(C.op, lambda ins, outs: {"llvm": te.LoopKernel()}, name=name)


def declare_builtins() -> None:
    gemm_f32(4, 16, 8, "gemm_4x16x8_f32")
    gemv_i8(1, 16, "gemv_1x16x16_i8")
