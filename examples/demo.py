"""tilecraft in five minutes: a tensor expression, a schedule, loops, native code;
then a whole ONNX model.

Run with `python3 tasks.py demo`. It writes a matmul as a TVM user would, prints
the te + sched IR and the loop IR the schedule produces, compiles it through LLVM,
checks the result against numpy and times both. Then it builds a small CNN as an
ONNX model (conv + batch_norm + relu, a residual block, pooling, a classifier),
compiles it with `tilecraft.compile`, shows the fused kernels and compares the
output with onnxruntime's where that is installed.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

import tilecraft as tc
from tilecraft import te


def main():
    n = 512
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")

    # The schedule: register tile C.local (4 x 64) per output block, B packed per
    # column block, columns vectorized, column blocks on all cores.
    s = te.create_schedule(C)
    CL = s.cache_write(C, "local")
    BB = s.cache_read(B, "global", [CL])
    i, j = s[C].op.axis
    io, jo, ii, ji = s[C].tile(i, j, 4, 64)
    s[C].reorder(jo, io, ii, ji)
    s[CL].compute_at(s[C], io)
    s[BB].compute_at(s[C], jo)
    ci, cj = s[CL].op.axis
    (ck,) = s[CL].op.reduce_axis
    s[CL].reorder(ck, ci, cj)
    s[CL].unroll(ci)
    s[CL].vectorize(cj)
    s[C].vectorize(ji)
    s[C].parallel(jo)

    print("== te + sched IR (what is computed, and how) ==")
    print(te.build_module(s, [A, B, C], "matmul"))
    print("\n== loop IR (tilecraft.lower) ==")
    print(tc.lower(s, [A, B, C], name="matmul"))

    t0 = time.perf_counter()
    f = tc.build(s, [A, B, C], name="matmul")
    print(f"\ncompiled in {time.perf_counter() - t0:.2f} s")

    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
    print("result matches numpy")

    def best(fn, repeat=10):
        fn()
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return sorted(times)[len(times) // 2]

    flops = 2 * n**3
    t_tc = best(lambda: f(a, b, c))
    time.sleep(0.3)  # let our idle threads sleep before numpy's run (bench/matmul.py does the same)
    t_np = best(lambda: np.matmul(a, b, out=c))
    print(f"tilecraft {flops / t_tc / 1e9:6.1f} GFLOP/s   numpy {flops / t_np / 1e9:6.1f} GFLOP/s "
          "(median of 10; bench/matmul.py measures this properly)")

    try:
        f(a, b[:, :-1].copy(), c)
    except ValueError as e:
        print(f"a wrong array is refused before native code runs: {e}")


def small_cnn(path: Path) -> None:
    """conv3x3 + BN + relu, a residual block, global pooling, fc 10; as ONNX."""
    from onnx import TensorProto, helper, numpy_helper, save

    rng = np.random.default_rng(1)

    def arr(name, *shape, scale=0.1):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c0", "s", "b", "m", "v"], ["n0"]),
        helper.make_node("Relu", ["n0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r0"], ["a"]),
        helper.make_node("Relu", ["a"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ]
    inits = [arr("w0", 32, 3, 3, 3), arr("s", 32), arr("b", 32), arr("m", 32),
             numpy_helper.from_array(np.full(32, 1.5, np.float32), "v"), arr("w1", 32, 32, 3, 3),
             arr("b1", 32), arr("w2", 32, 32, 3, 3), arr("b2", 32), arr("fw", 10, 32), arr("fb", 10)]  # fmt: skip
    graph = helper.make_graph(
        nodes, "small_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits,
    )  # fmt: skip
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), str(path))


def model_demo() -> None:
    print("\n== a whole model: ONNX -> graph -> fused kernels -> native code ==")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small_cnn.onnx"
        small_cnn(path)
        m = tc.compile(str(path))
        print(f"compiled {path.name} in {m.compile_seconds:.2f} s: {m.num_kernels} kernel calls "
              f"({', '.join(m.kernel_calls)})")  # fmt: skip
        print(f"planned intermediate memory {m.planned_bytes / 1e3:.0f} kB of a naive {m.naive_bytes / 1e3:.0f} kB")
        x = np.random.default_rng(2).standard_normal((1, 3, 64, 64), dtype=np.float32)
        y = m(x)
        try:
            import onnxruntime as ort
        except ImportError:
            print(f"output {y.ravel()[:4]} ... (install onnxruntime to compare)")
            return
        expected = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        print(f"largest difference from onnxruntime: {np.abs(y - expected).max():.1e}")
    print("the same model as text, level by level: see docs/guide/models.md")


if __name__ == "__main__":
    main()
    model_demo()
