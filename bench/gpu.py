"""The GPU target against PyTorch on the same card: SGEMM through tilecraft's PTX and cuBLAS.

Measured (a machine with an NVIDIA GPU, its driver and PyTorch with CUDA):
- `sgemm_<n>`: C = A @ B, n x n x n float32, two te schedules compiled with
  `tc.build(s, args, target="cuda")` — `naive` (a 16 x 16 thread block, one output
  per thread, the reduction in the thread) and `reg4` (each thread a 4 x 4 register
  tile: `cache_write(C, "local")` at the thread) and `shared` (TVM's GPU GEMM:
  a 128 x 128 tile per block of 16 x 16 threads, 8 x 8 registers per thread,
  8-deep slices of A and B in shared memory loaded by the block's threads
  together, barriers between) and `shared_v4` (the same with 16-byte vector
  loads and stores: A's slice transposed in shared memory) — against `torch.matmul` (cuBLAS; TF32 off, as
  PyTorch's default for float32 matmuls). The fastest schedule counts.

Both sides take the same torch tensors (tilecraft reads them through
`__cuda_array_interface__`, without copies) and are timed with CUDA events
(tilecraft's `time_evaluator`, torch.cuda.Event), medians of `--repeat` rounds.
Each result is checked against torch's first (a wrong one exits 1).

Not measured yet (null in the last line, listed under "missing"): the fp16
tensor-core GEMM, ResNet-50 conv layers, and ResNet-18/50 and the BERT layer
as whole models: tilecraft has no tensor-core intrinsics or
`tc.compile(target="cuda")` yet.

Usage: python bench/gpu.py [--sizes 1024,4096] [--repeat N]
The last line is one JSON object: `{"bench": "gpu", "device": ..,
"sgemm_4096_fraction_of_cublas": .., "hgemm_4096_fraction_of_cublas": null, ...}`
(a `_fraction_of_` key is throughput over the peer's).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import tilecraft as tc
from tilecraft import te

sys.path.insert(0, str(Path(__file__).resolve().parent))  # timing.py
from timing import run_info  # noqa: E402

VARIANTS = ("naive", "reg4", "shared", "shared_v4")


def sgemm(n: int, variant: str):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    r = te.reduce_axis((0, n), name="r")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    s = te.create_schedule(C)
    i, j = s[C].op.axis
    if variant == "naive":
        bi, bj, ti, tj = s[C].tile(i, j, 16, 16)
        s[C].bind(bi, te.thread_axis("blockIdx.y"))
        s[C].bind(bj, te.thread_axis("blockIdx.x"))
        s[C].bind(ti, te.thread_axis("threadIdx.y"))
        s[C].bind(tj, te.thread_axis("threadIdx.x"))
        return s, [A, B, C]
    if variant == "shared":
        return _shared_sgemm(s, A, B, C), [A, B, C]
    if variant == "shared_v4":
        return vector_sgemm(n, n, n)
    CL = s.cache_write(C, "local")
    tx, ii, jj = _block_tiles(s, C, 64, 4)
    s[C].unroll(ii)
    s[C].unroll(jj)
    s[CL].compute_at(s[C], tx)
    ci, cj = s[CL].op.axis
    (k,) = s[CL].op.reduce_axis
    s[CL].reorder(k, ci, cj)
    s[CL].unroll(ci)
    s[CL].unroll(cj)
    return s, [A, B, C]


def _block_tiles(s, C, block: int, thread: int):
    """C in `block` x `block` tiles per thread block, `thread` x `thread` per thread:
    blocks on blockIdx.y/x, threads on threadIdx.y/x; returns (the threadIdx.x
    axis, the thread's row and column axes)."""
    i, j = s[C].op.axis
    bi, ti = s[C].split(i, factor=block)
    bj, tj = s[C].split(j, factor=block)
    ty, ii = s[C].split(ti, factor=thread)
    tx, jj = s[C].split(tj, factor=thread)
    s[C].reorder(bi, bj, ty, tx, ii, jj)
    s[C].bind(bi, te.thread_axis("blockIdx.y"))
    s[C].bind(bj, te.thread_axis("blockIdx.x"))
    s[C].bind(ty, te.thread_axis("threadIdx.y"))
    s[C].bind(tx, te.thread_axis("threadIdx.x"))
    return tx, ii, jj


def _shared_sgemm(s, A, B, C, block: int = 128, thread: int = 8, ktile: int = 8):
    """TVM's GPU GEMM: a `block` x `block` tile of C per block of 16 x 16 threads,
    each a `thread` x `thread` register tile; A's and B's `ktile`-deep slices
    in shared memory at the reduction's outer loop, loaded by all the threads."""
    AA = s.cache_read(A, "shared", [C])
    BB = s.cache_read(B, "shared", [C])
    CL = s.cache_write(C, "local")
    threads = block // thread
    tx, ii, jj = _block_tiles(s, C, block, thread)
    s[C].unroll(ii)
    s[C].unroll(jj)
    s[CL].compute_at(s[C], tx)
    ci, cj = s[CL].op.axis
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=ktile)
    s[CL].reorder(ko, ki, ci, cj)
    s[CL].unroll(ki)
    s[CL].unroll(ci)
    s[CL].unroll(cj)
    for S in (AA, BB):
        s[S].compute_at(s[CL], ko)
        fused = s[S].fuse(*s[S].op.axis)
        outer, t = s[S].split(fused, factor=threads * threads)
        y, x = s[S].split(t, factor=threads)
        s[S].bind(y, te.thread_axis("threadIdx.y"))
        s[S].bind(x, te.thread_axis("threadIdx.x"))
        s[S].unroll(outer)
    return s


def vector_sgemm(m: int, n: int, k: int, block: int = 128, thread: int = 8, ktile: int = 8):
    """`shared` with 16-byte vector accesses: A's slice held transposed in shared
    memory (`AT[r, i]`, a stage of its own in "shared" scope), so that a thread's
    `thread` x `thread` register tile reads `thread`-long rows of both slices,
    4 floats at a time (`ld.shared.v4.f32`) into "local" copies at each `r`;
    the block's threads load the slices 4 floats each (`ld.global.v4.f32`;
    B's stored with `st.shared.v4.f32`, A's transposed with 4 scalar stores)
    and write C 4 floats at a time."""
    A = te.placeholder((m, k), "float32", name="A")
    B = te.placeholder((k, n), "float32", name="B")
    AT = te.compute((k, m), lambda r, i: A[i, r], name="AT")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((m, n), lambda i, j: te.sum(AT[r, i] * B[r, j], axis=r), name="C")
    s = te.create_schedule(C)
    threads = block // thread
    s[AT].set_scope("shared")
    BB = s.cache_read(B, "shared", [C])
    CL = s.cache_write(C, "local")
    AL = s.cache_read(AT, "local", [CL])
    BL = s.cache_read(BB, "local", [CL])
    tx, ii, jj = _block_tiles(s, C, block, thread)
    s[C].unroll(ii)
    jo, jv = s[C].split(jj, factor=4)
    s[C].unroll(jo)
    s[C].vectorize(jv)
    s[CL].compute_at(s[C], tx)
    ci, cj = s[CL].op.axis
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=ktile)
    s[CL].reorder(ko, ki, ci, cj)
    for axis in (ki, ci, cj):
        s[CL].unroll(axis)
    for L in (AL, BL):  # a thread's row of each slice, 4 floats at a time
        s[L].compute_at(s[CL], ki)
        outer, lanes = s[L].split(s[L].op.axis[1], factor=4)
        s[L].unroll(outer)
        s[L].vectorize(lanes)
    # The slices: AT's loads walk A's rows (r innermost, 4 at a time), B's its rows.
    r_, i_ = s[AT].op.axis
    s[AT].compute_at(s[CL], ko)
    r_outer, r_lanes = s[AT].split(r_, factor=4)
    s[AT].reorder(i_, r_outer, r_lanes)
    r_, j_ = s[BB].op.axis
    s[BB].compute_at(s[CL], ko)
    j_outer, j_lanes = s[BB].split(j_, factor=4)
    for S, axes, lanes in ((AT, (i_, r_outer), r_lanes), (BB, (r_, j_outer), j_lanes)):
        outer, t = s[S].split(s[S].fuse(*axes), factor=threads * threads)
        y, x = s[S].split(t, factor=threads)
        s[S].bind(y, te.thread_axis("threadIdx.y"))
        s[S].bind(x, te.thread_axis("threadIdx.x"))
        s[S].unroll(outer)
        s[S].vectorize(lanes)
    return s, [A, B, C]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1024,4096")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("bench/gpu.py needs PyTorch with CUDA (the peer)")
    if not torch.cuda.is_available():
        sys.exit("bench/gpu.py needs a CUDA GPU: torch.cuda.is_available() is False")
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.cuda.get_device_name(0)
    result: dict = {"bench": "gpu", "device": device}
    rows = {}
    for n in [int(x) for x in args.sizes.split(",")]:
        a = torch.randn(n, n, device="cuda")
        b = torch.randn(n, n, device="cuda")
        expected = a @ b
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        number = max(1, int(2e10 // (2 * n**3)))
        torch_times = []
        for _ in range(args.repeat):
            start.record()
            for _ in range(number):
                torch.matmul(a, b)
            stop.record()
            torch.cuda.synchronize()
            torch_times.append(start.elapsed_time(stop) / 1e3 / number)
        row = {"cublas_ms": round(statistics.median(torch_times) * 1e3, 4)}
        for variant in VARIANTS:
            s, te_args = sgemm(n, variant)
            f = tc.build(s, te_args, target="cuda")
            c = torch.empty(n, n, device="cuda")
            f(a, b, c)
            torch.cuda.synchronize()
            error = float((c - expected).abs().max() / expected.abs().max())
            if error > 1e-4:
                sys.exit(f"bench/gpu.py: sgemm {variant} at n = {n} is wrong (max relative error {error:.3g})")
            times = f.time_evaluator(number=number, repeat=args.repeat)(a, b, c).results
            row[f"{variant}_ms"] = round(statistics.median(times) * 1e3, 4)
        best = min(row[f"{variant}_ms"] for variant in VARIANTS)
        row["tflops"] = round(2 * n**3 / (best / 1e3) / 1e12, 2)
        row["cublas_tflops"] = round(2 * n**3 / (row["cublas_ms"] / 1e3) / 1e12, 2)
        row["fraction_of_cublas"] = round(row["cublas_ms"] / best, 3)
        rows[n] = row
        times = ", ".join(f"{variant} {row[f'{variant}_ms']:.3f} ms" for variant in VARIANTS)
        print(f"sgemm {n}: {times}, cuBLAS {row['cublas_ms']:.3f} ms "
              f"({row['tflops']} vs {row['cublas_tflops']} TFLOP/s: {row['fraction_of_cublas']}x)")  # fmt: skip
        result[f"sgemm_{n}_fraction_of_cublas"] = row["fraction_of_cublas"]
    missing = ["hgemm_4096_fraction_of_cublas", "resnet50_b1_vs_torch", "resnet50_b16_vs_torch",
               "bert_b1_vs_torch", "bert_b16_vs_torch"]  # fmt: skip
    result.update({key: None for key in missing})
    result["missing"] = missing
    run = run_info() | {"torch": torch.__version__, "torch_cuda": torch.version.cuda}
    out = Path(__file__).resolve().parent / "results" / "gpu.json"
    out.write_text(json.dumps(result | {"run": run, "sizes": rows}, indent=1) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
