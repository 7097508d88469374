"""Loop-level functions whose buffers have `?` sizes, compiled once and called
at many sizes (`convert-loop-to-llvm`'s compact descriptors, `CompiledFunction`
binding the sizes): results against numpy at sizes 1, primes and multiples of
the vector width +-1, the sizes named by `tc.dims` checked across arguments,
and the manifest of a saved library keeping them."""

from __future__ import annotations

import numpy as np
import pytest

from tilecraft.backends.llvm.jit import shape_from_json, shape_to_json
from tilecraft.driver.context import parse_text
from tilecraft.driver.kernels import compile_loop_module
from tilecraft.utils.symbolic import SymExpr

SIZES = [1, 2, 7, 15, 16, 17, 31, 64, 97]

# A row-parallel `B = A * A + C[j]` over `A: m x n` (dynamic strides, a launch
# to a run-time bound); a
# doubling over a leading `?` (static strides: vectorized) on 4 threads; copies
# whose vectorized loops read buffers with a trailing `?`: along the last axis
# (vector loads, or a gather whose offsets take the strides from the sizes) and
# across rows (kept serial: the lanes' stride is known only when it runs).
TEXT = """
func.func @rows(%A: memref<?x?xf32> {tc.name = "A", tc.dims = ["m", "n"]},
                %C: memref<?xf32> {tc.name = "C", tc.dims = ["n"]},
                %B: memref<?x?xf32> {tc.name = "B", tc.dims = ["m", "n"]}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %A, %c0 : memref<?x?xf32>
  %n = memref.dim %A, %c1 : memref<?x?xf32>
  loop.for %i = 0 to %m parallel {
    loop.for %j = 0 to %n {
      %a = memref.load %A[%i, %j] : memref<?x?xf32>
      %c = memref.load %C[%j] : memref<?xf32>
      %s = arith.mulf %a, %a : f32
      %t = arith.addf %s, %c : f32
      memref.store %t, %B[%i, %j] : memref<?x?xf32>
    }
  }
  func.return
}

func.func @scale(%X: memref<?x24xf32> {tc.name = "X", tc.dims = ["batch"]},
                 %Y: memref<?x24xf32> {tc.name = "Y", tc.dims = ["batch"]}) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %b = memref.dim %X, %c0 : memref<?x24xf32>
  loop.for %jo = 0 to 3 parallel {
    loop.for %i = 0 to %b {
      loop.for %ji = 0 to 8 vectorized {
        %t = arith.muli %jo, %c8 : index
        %j = arith.addi %t, %ji : index
        %x = memref.load %X[%i, %j] : memref<?x24xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %Y[%i, %j] : memref<?x24xf32>
      }
    }
  } {tc.max_threads = 4 : i64}
  func.return
}

func.func @corner(%A: memref<?x?xf32> {tc.name = "A"}, %B: memref<?x4xf32> {tc.name = "B"}) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %B, %c0 : memref<?x4xf32>
  loop.for %i = 0 to %m {
    loop.for %j = 0 to 4 vectorized {
      %a = memref.load %A[%i, %j] : memref<?x?xf32>
      memref.store %a, %B[%i, %j] : memref<?x4xf32>
    }
  }
  func.return
}

func.func @column(%A: memref<?x?xf32> {tc.name = "A"}, %B: memref<?x4xf32> {tc.name = "B"}) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %B, %c0 : memref<?x4xf32>
  loop.for %i = 0 to %m {
    loop.for %j = 0 to 4 vectorized {
      %a = memref.load %A[%j, %i] : memref<?x?xf32>
      memref.store %a, %B[%i, %j] : memref<?x4xf32>
    }
  }
  func.return
}

func.func @every_other(%A: memref<?x?x?xf32> {tc.name = "A"}, %B: memref<?x?x4xf32> {tc.name = "B"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m = memref.dim %B, %c0 : memref<?x?x4xf32>
  %n = memref.dim %B, %c1 : memref<?x?x4xf32>
  loop.for %i = 0 to %m {
    loop.for %k = 0 to %n {
      loop.for %j = 0 to 4 vectorized {
        %jj = arith.muli %j, %c2 : index
        %a = memref.load %A[%i, %k, %jj] : memref<?x?x?xf32>
        memref.store %a, %B[%i, %k, %j] : memref<?x?x4xf32>
      }
    }
  }
  func.return
}
"""


@pytest.fixture(scope="module")
def jit():
    return compile_loop_module(parse_text(TEXT), num_threads=4)


def test_one_compile_serves_every_size(jit):
    rng = np.random.default_rng(0)
    f = jit["rows"]
    # (4096 rows pay for several threads: the launch's cap comes from its extent)
    for m, n in [*((m, n) for m in SIZES for n in (1, 5, 16, 33)), (4096, 64)]:
        A = rng.standard_normal((m, n), dtype=np.float32)
        C = rng.standard_normal(n, dtype=np.float32)
        B = np.zeros_like(A)
        f(A, C, B)
        np.testing.assert_allclose(B, A * A + C, rtol=1e-5, atol=1e-6, err_msg=f"m={m} n={n}")


def test_leading_dynamic_size_on_threads(jit):
    rng = np.random.default_rng(1)
    for batch in SIZES:
        X = rng.standard_normal((batch, 24), dtype=np.float32)
        Y = np.zeros_like(X)
        jit["scale"](X, Y)
        np.testing.assert_array_equal(Y, X + X)
    assert "<8 x float>" in jit.llvm_ir


def test_lanes_along_the_last_axis_of_dynamic_strides_vectorize(jit):
    # (the last axis has stride 1 whatever the sizes; a gather's offsets take the
    # strides from the sizes passed: A[i, k, 2j] of an m x n x p buffer)
    rng = np.random.default_rng(2)
    for m, n in [(1, 4), (3, 9), (17, 5)]:
        A = rng.standard_normal((m, n), dtype=np.float32)
        B = np.zeros((m, 4), np.float32)
        jit["corner"](A, B)
        np.testing.assert_array_equal(B, A[:, :4])
        A3 = rng.standard_normal((m, n, 8 + m), dtype=np.float32)
        B3 = np.zeros((m, n, 4), np.float32)
        jit["every_other"](A3, B3)
        np.testing.assert_array_equal(B3, A3[:, :, 0:8:2])
    assert "llvm.masked.gather" in jit.llvm_ir  # (only every_other's lanes gather)


def test_lanes_across_a_dynamic_stride_stay_serial(jit):
    rng = np.random.default_rng(3)
    for m, n in [(1, 4), (3, 9), (6, 5)]:
        A = rng.standard_normal((4, max(m, n)), dtype=np.float32)
        B = np.zeros((m, 4), np.float32)
        jit["column"](A, B)
        np.testing.assert_array_equal(B, A[:, :m].T)


def test_signature_names_the_sizes(jit):
    assert jit["rows"].specs[0].shape == (SymExpr.lift("m"), SymExpr.lift("n"))
    assert jit["rows"].specs[0].dynamic == (0, 1)
    assert "A: float32[m, n]" in repr(jit["rows"])


@pytest.mark.parametrize(
    "shapes, message",
    [
        ([(3, 5), (4,), (3, 5)], r"argument 'C' \(#2\): dimension 0 is 4, but n is 5"),
        ([(3, 5), (5,), (2, 5)], r"argument 'B' \(#3\): dimension 0 is 2, but m is 3"),
        ([(0, 5), (5,), (0, 5)], r"argument 'A' \(#1\): dimension 0 \(m\) is 0; a size is at least 1"),
        ([(3, 5, 1), (5,), (3, 5)], r"argument 'A' \(#1\) has 3 dimensions, expected 2"),
    ],
)
def test_sizes_that_disagree_are_refused(jit, shapes, message):
    arrays = [np.zeros(s, np.float32) for s in shapes]
    with pytest.raises(ValueError, match=message):
        jit["rows"](*arrays)


def test_static_sizes_are_still_checked(jit):
    with pytest.raises(ValueError, match=r"argument 'X' \(#1\): dimension 1 is 23, expected 24"):
        jit["scale"](np.zeros((4, 23), np.float32), np.zeros((4, 23), np.float32))


def test_an_output_overlapping_an_input_is_refused(jit):
    A = np.zeros((4, 4), np.float32)
    with pytest.raises(ValueError, match="overlaps"):
        jit["rows"](A, np.zeros(4, np.float32), A)


def test_unnamed_sizes_are_bound_per_argument():
    text = """
func.func @first(%A: memref<?xf32>, %B: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %B, %c0 : memref<?xf32>
  %a = memref.load %A[%c0] : memref<?xf32>
  loop.for %i = 0 to %n {
    memref.store %a, %B[%i] : memref<?xf32>
  }
  func.return
}"""
    f = compile_loop_module(parse_text(text))["first"]
    assert [str(d) for s in f.specs for d in s.shape] == ["arg0_0", "arg1_0"]
    B = np.zeros(6, np.float32)
    f(np.array([3.0], np.float32), B)
    np.testing.assert_array_equal(B, 3.0)


def test_manifest_shapes_round_trip():
    shape = (SymExpr.lift("batch") * 2, 768)
    assert shape_to_json(shape) == ["2 * batch", 768]
    assert shape_from_json(shape_to_json(shape)) == shape
