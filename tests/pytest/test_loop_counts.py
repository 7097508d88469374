"""Loop-level counts (analysis/loop_counts.py) against the counters of an
instrumented build (transforms/instrument_counters.py, runtime/counters.py):
on static programs every block runs exactly as often as the static analysis
says — on random te programs under random schedules here, on each network of
the test zoo in test_networks.py — and where control flow depends on data the
counters still count and the static side says why it cannot."""

from __future__ import annotations

import random

import numpy as np
import pytest
from schedule_gen import pipeline, random_pipeline_schedule

import tilecraft as tc
from tilecraft.analysis.framework import AnalysisManager
from tilecraft.driver.context import parse_text
from tilecraft.runtime.counters import CounterBuild

TAIL = """
func.func @tail(%A: memref<10xf32> {tc.name = "A"}, %B: memref<10xf32> {tc.name = "B"}) {
  loop.for %io = 0 to 3 parallel {
    loop.for %ii = 0 to 4 vectorized {
      %c4 = arith.constant 4 : index
      %t = arith.muli %io, %c4 : index
      %i = arith.addi %t, %ii : index
      %c10 = arith.constant 10 : index
      %ok = arith.cmpi slt, %i, %c10 : index
      loop.guard %ok {
        %a = memref.load %A[%i] : memref<10xf32>
        %b = arith.mulf %a, %a : f32
        %c = arith.addf %b, %a : f32
        memref.store %c, %B[%i] : memref<10xf32>
      }
    }
  }
  func.return
}
"""

SCATTER = """
func.func @scatter(%I: memref<6xi64> {tc.name = "I"}, %A: memref<8xf32> {tc.name = "A"}) {
  loop.for %i = 0 to 6 {
    %raw = memref.load %I[%i] : memref<6xi64>
    %n = arith.index_cast %raw : i64 to index
    %c8 = arith.constant 8 : index
    %ok = arith.cmpi slt, %n, %c8 : index
    loop.guard %ok {
      %one = arith.constant 1.0 : f32
      memref.store %one, %A[%n] : memref<8xf32>
    }
  }
  func.return
}
"""


@pytest.mark.parametrize("seed", range(30))
def test_random_te_program_counts_equal_the_static_analysis(seed):
    """Random 4-stage te programs (negative `//`/`%` indices, padding through
    if_then_else, a windowed reduction) under random schedules (compute_at,
    inline, cache_write, split/fuse/reorder, vectorize/parallel/unroll): the
    guards and tails they leave are counted exactly, and the instrumented build
    computes what the plain one does."""
    from tilecraft.api import lower_module

    rng = random.Random(seed)
    m, n = rng.randint(1, 9), rng.randint(1, 13)
    A, B, C, D = pipeline(rng, m, n)
    s = random_pipeline_schedule(rng, A, B, C, D)
    a = np.random.default_rng(seed).standard_normal((m, n)).astype(np.float32)
    d, expected = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    counts = CounterBuild(lower_module(s, [A, D]), "main", optimize=False).run(a, d)
    tc.build(s, [A, D])(a, expected)
    np.testing.assert_allclose(d, expected, rtol=1e-6)
    assert counts.mismatches() == [], f"seed {seed}"


def test_guard_tail_counts_per_buffer():
    """A split of 10 by 4: 12 guard checks, 10 taken, 4 bytes read of A and
    written to B by each; the loops run 3 and 12 times."""
    build = CounterBuild(parse_text(TAIL), "tail", optimize=False)
    a = np.arange(10, dtype=np.float32)
    b = np.zeros(10, np.float32)
    counts = build.run(a, b)
    np.testing.assert_array_equal(b, a * a + a)
    assert [(blk.label, int(n)) for blk, n in zip(counts.blocks, counts.runs)] == [
        ("entry", 1), ("loop %io", 3), ("loop %ii", 12), ("guard %ok", 10),
    ]  # fmt: skip
    row = counts.kernels()["tail"]
    assert row["buffers"] == {"A": [40, 0], "B": [0, 40]}
    assert (row["guards"], row["guards_taken"], row["macs"], row["flops"]) == (12, 10, 10, 20)
    assert counts.mismatches() == []


def test_data_dependent_guard_is_counted_and_reported():
    """A guard on loaded indices: the counters say how often it held; the static
    analysis cannot, and the mismatch says why rather than guessing."""
    build = CounterBuild(parse_text(SCATTER), "scatter", optimize=False)
    counts = build.run(np.array([0, 9, 3, 8, 7, 100], np.int64), np.zeros(8, np.float32))
    assert int(counts.runs[-1]) == 3  # indices 0, 3 and 7 are in range
    assert counts.mismatches() == ["@scatter: guard %ok: ran 3, static None (a condition reads memref.load)"]
    result = AnalysisManager().run("loop-counts", parse_text(SCATTER))
    assert result.unknown == ["@scatter: guard %ok: a condition reads memref.load"]


def test_a_dependency_of_another_level_is_an_error():
    from tilecraft.analysis.framework import Analysis, AnalysisError, register_analysis, _ANALYSES

    class PerKernelMacs(Analysis):
        name = "per-kernel-macs"
        level = "loop"
        requires = ("macs",)

    register_analysis(PerKernelMacs)
    try:
        with pytest.raises(
            AnalysisError, match="'per-kernel-macs' \\(loop level\\) requires 'macs', which is a graph-level"
        ):
            AnalysisManager().run("per-kernel-macs", parse_text(TAIL))
    finally:
        _ANALYSES.pop("per-kernel-macs")


FILL = """
func.func @fill(%A: memref<64xf32> {tc.name = "A"}, %S: memref<1xi64> {tc.name = "S"}) {
  %c0 = arith.constant 0 : index
  %s = memref.load %S[%c0] : memref<1xi64>
  %n = arith.index_cast %s : i64 to index
  loop.for %i = 0 to %n parallel {
    %z = arith.constant 2.0 : f32
    memref.store %z, %A[%i] : memref<64xf32>
  }
  func.return
}
"""


@pytest.mark.parametrize("n", [0, 1, 5, 64])
def test_a_loop_to_a_run_time_bound(n):
    """`loop.for %i = 0 to %n` runs n times (none for 0), natively; its count is
    known only when it runs, and the static analysis says so."""
    build = CounterBuild(parse_text(FILL), "fill", optimize=False)
    a = np.zeros(64, np.float32)
    counts = build.run(a, np.array([n], np.int64))
    np.testing.assert_array_equal(a, np.where(np.arange(64) < n, 2.0, 0.0))
    assert counts.kernels()["fill"]["iterations"] == n
    assert counts.kernels()["fill"]["buffers"]["A"] == [0, 4 * n]
    assert counts.mismatches() == [f"@fill: loop %i: ran {n}, static None (loop %i runs to %n (known when it runs))"]
