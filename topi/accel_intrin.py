"""The accelerator's GEMM as a tensor intrinsic: what `s[C].tensorize(axis, ...)`
names in an accelerator schedule.

`gemm_intrin(spec)`: `C[BATCH, BLOCK] += A[BATCH, BLOCK] x W[BLOCK, BLOCK]^T` with
the spec's input, weight and accumulator types. At VTA's default spec it is the
built-in `gemv_1x16x16_i8` (so loop IR that names it parses anywhere); other specs
declare `gemv_<BATCH>x<BLOCK>x<BLOCK>_i<width>` on first use. Its "accel" lowering
is the GEMM unit (convert-loop-to-accel makes GEMM instructions of it); its "llvm"
lowering is the same computation as a CPU loop nest, so an accelerator schedule also
runs on the CPU.
"""

from __future__ import annotations

from tilecraft.backends.accel.spec import AccelSpec, default_spec


def gemm_intrin(spec: AccelSpec | None = None):
    from tilecraft.dialects.tensor_intrin import lookup
    from tilecraft.frontends import te

    spec = spec or default_spec()
    batch, block = spec.batch, spec.block
    widths = (spec.inp_width, spec.wgt_width, spec.acc_width)
    if len(set(widths[:2])) != 1:
        raise ValueError(f"the GEMM intrinsic takes inputs and weights of one width, not {widths[:2]}")
    name = f"gemv_{batch}x{block}x{block}_i{widths[0]}"
    known = lookup(name)
    if known is not None and known.lowering("accel") == "gemm":
        return known
    inp, acc = f"int{widths[0]}", f"int{widths[2]}"
    a = te.placeholder((batch, block), inp, name="A")
    w = te.placeholder((block, block), inp, name="W")
    k = te.reduce_axis((0, block), name="k")
    c = te.compute((batch, block), lambda i, j: te.sum(a[i, k].astype(acc) * w[j, k].astype(acc), axis=k), name="C")
    return te.decl_tensor_intrin(c.op, lambda ins, outs: {"accel": "gemm", "llvm": te.LoopKernel()}, name=name)
