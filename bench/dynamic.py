"""One compile for every size: BERT's feed-forward dense layer and a whole BERT layer with sizes known only when it runs.

The FFN dense layer: Y = relu(X @ W + b) with X: m x 768, W: 768 x 3072 (m = batch x
sequence length, in `--sizes`), two ways:

1. The model (the headline): an ONNX model whose X has the `dim_param` "m",
   - `dynamic`: `tc.compile(model)` once: one native function for every m (the
     default schedules with a symbolic m: 6-row register tiles, the last guarded,
     loop-partition leaving the others unguarded);
   - `static`: `tc.compile(model, input_shapes={"X": (m, 768)})` per size (the same
     defaults for a known m: the bar);
   - `ort`: onnxruntime on the same model, with as many threads as tilecraft uses.
2. The te kernel alone (bench/matmul.py's hand GEMM: a 6 x 64 register tile in a
   local buffer, column blocks in parallel), for what partitioning brings:
   - `te_dynamic`: `tc.build` once with `m = te.var("m")`;
   - `te_guarded`: the same function compiled without `loop-partition` (every row
     tile checks `i < m`: the naive way to take any size).

3. The BERT-base encoder layer of bench/models.py (hidden 768, 12 heads, FFN 3072)
   with the dim_params `batch` and `seq` (`--bert-sizes` lists batch x seq):
   `dynamic` (one `tc.compile`), `static` (one per size) and `ort`, as above.

Each result is checked against numpy (the BERT layer against onnxruntime) first
(a wrong one exits 1). Times are medians of interleaved rounds (bench/timing.py);
a key `a_vs_b` is the time of `a` over the time of `b` (geometric means over the
sizes of both models, `_worst` the largest; `dynamic_vs_guarded_geomean` over the
sizes that do not divide the tile, where the guard is taken; `bert_...` and
`ffn_...` keys over one model's sizes). `compilations` counts the compilations of
each dynamic model: its one `tc.compile` plus the LLVM modules built while it ran
at every size (none expected; the larger count of the two models); `compile_s` is the dynamic BERT layer's
compile time and `static_compile_s` the median of its static compiles (the
compile cache is off); `ffn_compile_s` likewise for the FFN model.

Usage: python bench/dynamic.py [--sizes 1,7,33,100,128,257,512]
       [--bert-sizes 1x1,1x7,1x33,1x128,3x33,1x257,8x128] [--repeat N]
The last line printed is one JSON object: `{"bench": "dynamic",
"dynamic_vs_static_geomean", "dynamic_vs_static_worst", "dynamic_vs_guarded_geomean",
"dynamic_vs_ort_geomean", "compilations", "compile_s", "static_compile_s", ...}`.
ResNet-18 of the issue is not measured: conv2d does not take symbolic sizes yet.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import tilecraft as tc
from tilecraft import te

sys.path.insert(0, str(Path(__file__).resolve().parent))  # timing.py, models.py
from timing import run_info, timed  # noqa: E402

K, N = 768, 3072


def dense(m, mr: int = 6, nr: int = 64):
    X = te.placeholder((m, K), "float32", name="X")
    W = te.placeholder((K, N), "float32", name="W")
    k = te.reduce_axis((0, K), name="k")
    Y = te.compute((m, N), lambda i, j: te.sum(X[i, k] * W[k, j], axis=k), name="Y")
    s = te.create_schedule(Y)
    YL = s.cache_write(Y, "local")
    i, j = s[Y].op.axis
    io, jo, ii, ji = s[Y].tile(i, j, mr, nr)
    s[Y].reorder(jo, io, ii, ji)
    s[YL].compute_at(s[Y], io)
    ci, cj = s[YL].op.axis
    (ck,) = s[YL].op.reduce_axis
    s[YL].reorder(ck, ci, cj)
    s[YL].unroll(ci)
    s[YL].vectorize(cj)
    s[Y].vectorize(ji)
    s[Y].parallel(jo)
    return s, [X, W, Y]


def guarded_build(m):
    """The dynamic function compiled without loop-partition."""
    from xdsl.dialects import func

    from tilecraft.backends.llvm.jit import jit_module, signatures_of
    from tilecraft.driver.context import make_context
    from tilecraft.driver.te_pieces import lower_module
    from tilecraft.frontends.te.emit import symbolic_sizes
    from tilecraft.pipelines.loop_to_llvm import loop_to_llvm_passes
    from tilecraft.pipelines.run_stages import run_stages

    s, args = dense(m)
    module = lower_module(s, args, "main", symbolic_sizes([m]))
    signatures = signatures_of([op for op in module.ops if isinstance(op, func.FuncOp)])
    passes = [p for p in loop_to_llvm_passes() if p.name != "loop-partition"]
    run_stages(passes, make_context(), module)
    return jit_module(module, signatures)["main"]


def ffn_model():
    """Y = relu(X @ W + b), X: [m, 768] with the dim_param "m"."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    w = rng.standard_normal((K, N)).astype(np.float32) / 16
    b = rng.standard_normal(N).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["H"]), helper.make_node("Add", ["H", "B"], ["A"]),
         helper.make_node("Relu", ["A"], ["Y"])],
        "ffn",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["m", K])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["m", N])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model, w, b


def ort_session(model, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def check(label: str, got: np.ndarray, expected: np.ndarray, m: int) -> None:
    try:
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3 * K**0.5)
    except AssertionError as e:
        sys.exit(f"bench/dynamic.py: {label} computes a wrong Y at m = {m}:{e}")


def geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def bert_rows(pairs: list[tuple[int, int]], repeat: int, threads: int) -> tuple[dict, dict]:
    """The BERT layer at each (batch, seq): dynamic, static and ort times."""
    from models import bert_layer

    from tilecraft.backends.llvm.compile import modules_built

    model = bert_layer(seq="seq", batch="batch")
    session = ort_session(model, threads)
    start, before = time.perf_counter(), modules_built()
    dynamic = tc.compile(model)
    info = {"compile_s": time.perf_counter() - start, "pieces": modules_built() - before, "built_during_calls": 0}
    rng = np.random.default_rng(0)
    rows, static_compiles = {}, []
    print(f"\nBERT-base layer (batch, seq dynamic); threads: {threads}")
    print(f"{'batch x seq':>11} {'dynamic ms':>11} {'static ms':>10} {'ort ms':>8} {'dyn/static':>10} {'dyn/ort':>8}")
    for batch, seq in pairs:
        x = rng.standard_normal((batch, seq, 768), dtype=np.float32)
        start = time.perf_counter()
        static = tc.compile(model, input_shapes={"input": (batch, seq, 768)})
        static_compiles.append(time.perf_counter() - start)
        expected = session.run(None, {"input": x})[0]
        before = modules_built()
        for label, fn in (("the dynamic BERT layer", dynamic), ("the static BERT layer", static)):
            try:
                np.testing.assert_allclose(fn(x), expected, rtol=1e-3, atol=1e-3)
            except AssertionError as e:
                sys.exit(f"bench/dynamic.py: {label} is wrong at batch {batch}, seq {seq}:{e}")
        calls = {"dynamic": lambda: dynamic(x), "static": lambda: static(x), "ort": lambda: session.run(None, {"input": x})}
        times = timed(calls, repeat, rounds=3)
        info["built_during_calls"] += modules_built() - before
        row = {name: round(t * 1e3, 4) for name, t in times.items()}
        row.update(dynamic_vs_static=round(times["dynamic"] / times["static"], 3),
                   dynamic_vs_ort=round(times["dynamic"] / times["ort"], 3))  # fmt: skip
        rows[f"{batch}x{seq}"] = row
        print(f"{batch:>5} x {seq:<4} {row['dynamic']:>11.3f} {row['static']:>10.3f} {row['ort']:>8.3f} "
              f"{row['dynamic_vs_static']:>10.3f} {row['dynamic_vs_ort']:>8.3f}")  # fmt: skip
    info["static_compile_s"] = statistics.median(static_compiles)
    return rows, info


def main() -> None:
    import os

    from tilecraft.backends.llvm.compile import modules_built
    from tilecraft.utils.threads import resolve_threads

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,7,33,100,128,257,512")
    parser.add_argument("--bert-sizes", default="1x1,1x7,1x33,1x128,3x33,1x257,8x128")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    pairs = [(int(b), int(n)) for b, n in (p.split("x") for p in args.bert_sizes.split(",") if p)]
    os.environ["TILECRAFT_CACHE_DIR"] = "0"  # compile times are compiles, not cache reads
    threads = resolve_threads(None)
    model, w, b = ffn_model()
    session = ort_session(model, threads)

    start, before = time.perf_counter(), modules_built()
    dynamic = tc.compile(model)
    compile_s = time.perf_counter() - start
    dynamic_builds = modules_built() - before
    s, te_args = dense(te.var("m"))
    te_dynamic = tc.build(s, te_args)
    if te_dynamic._build.symbolic is None:
        sys.exit(f"bench/dynamic.py: the te kernel was not built for every size: {te_dynamic._build.why_specialized}")
    te_guarded = guarded_build(te.var("m"))

    rng = np.random.default_rng(0)
    calls_built = 0  # LLVM modules built while the dynamic model ran (none expected)
    rows, static_compiles = {}, []
    print(f"threads: {threads}; Y = relu(X @ W + b), X: m x {K}, W: {K} x {N}")
    print(f"{'m':>5} {'dynamic ms':>11} {'static ms':>10} {'ort ms':>8} {'te ms':>8} {'guarded ms':>11} "
          f"{'dyn/static':>10} {'dyn/ort':>8} {'te/guard':>9}")  # fmt: skip
    for size in sizes:
        x = rng.standard_normal((size, K), dtype=np.float32)
        start = time.perf_counter()
        static = tc.compile(model, input_shapes={"X": (size, K)})
        static_compiles.append(time.perf_counter() - start)
        expected = np.maximum(x @ w + b, 0)
        product = x @ w
        te_out = {name: np.full((size, N), np.nan, np.float32) for name in ("te", "guarded")}
        calls = {
            "dynamic": lambda: dynamic(x),
            "static": lambda: static(x),
            "ort": lambda: session.run(None, {"X": x}),
            "te": lambda: te_dynamic(x, w, te_out["te"]),
            "guarded": lambda: te_guarded(x, w, te_out["guarded"]),
        }
        before = modules_built()
        check("the dynamic model", calls["dynamic"](), expected, size)
        calls_built += modules_built() - before
        check("the static model", calls["static"](), expected, size)
        check("onnxruntime", calls["ort"]()[0], expected, size)
        for name in ("te", "guarded"):
            calls[name]()
            check(f"the {name} te kernel", te_out[name], product, size)
        before = modules_built()
        times = timed(calls, args.repeat, rounds=3)
        calls_built += modules_built() - before
        row = {name: round(t * 1e3, 4) for name, t in times.items()}
        row.update(
            dynamic_vs_static=round(times["dynamic"] / times["static"], 3),
            dynamic_vs_ort=round(times["dynamic"] / times["ort"], 3),
            te_vs_guarded=round(times["te"] / times["guarded"], 3),
        )
        rows[size] = row
        print(f"{size:>5} {row['dynamic']:>11.3f} {row['static']:>10.3f} {row['ort']:>8.3f} {row['te']:>8.3f} "
              f"{row['guarded']:>11.3f} {row['dynamic_vs_static']:>10.3f} {row['dynamic_vs_ort']:>8.3f} "
              f"{row['te_vs_guarded']:>9.3f}")  # fmt: skip
    bert, bert_info = bert_rows(pairs, args.repeat, threads) if pairs else ({}, {})
    both = [*rows.values(), *bert.values()]
    non_dividing = [r for size, r in rows.items() if size % 6]

    def over(key: str, rows_of) -> float | None:
        values = [r[key] for r in rows_of]
        return round(geomean(values), 3) if values else None

    result = {
        "bench": "dynamic",
        "dynamic_vs_static_geomean": over("dynamic_vs_static", both),
        "dynamic_vs_static_worst": max(r["dynamic_vs_static"] for r in both),
        "dynamic_vs_guarded_geomean": over("te_vs_guarded", non_dividing),
        "dynamic_vs_ort_geomean": over("dynamic_vs_ort", both),
        "compilations": 1 + max(calls_built, bert_info["built_during_calls"] if bert else 0),
        "compile_s": round(bert_info["compile_s"], 3) if bert else round(compile_s, 3),
        "static_compile_s": round(bert_info["static_compile_s"], 3) if bert else round(statistics.median(static_compiles), 3),
        "ffn_dynamic_vs_static_geomean": over("dynamic_vs_static", rows.values()),
        "ffn_dynamic_vs_ort_geomean": over("dynamic_vs_ort", rows.values()),
        "bert_dynamic_vs_static_geomean": over("dynamic_vs_static", bert.values()),
        "bert_dynamic_vs_ort_geomean": over("dynamic_vs_ort", bert.values()),
        "ffn_compile_s": round(compile_s, 3),
        "ffn_static_compile_s": round(statistics.median(static_compiles), 3),
        "ffn_pieces_built": dynamic_builds,
        "built_during_calls": calls_built + (bert_info["built_during_calls"] if bert else 0),
        "threads": threads,
        "run": run_info(),
        "sizes": rows,
        "bert_sizes": bert,
    }
    out = Path(__file__).resolve().parent / "results" / "dynamic.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("run", "sizes", "bert_sizes")}))


if __name__ == "__main__":
    main()
