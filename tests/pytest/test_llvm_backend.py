"""The LLVM backend against numpy: hand-written loop IR, compiled and run in-process.

Each test writes a small loop-level function, compiles it with
`compile_loop_module`, runs it on random arrays and compares with numpy. Between
them they cover every loop kind (and their mixtures), guards and `scf.if` with
uniform and lane-varying conditions (branches vs masks), contiguous, strided
and gathered vector access, local and global buffers, every supported element
type, the arith and math ops, the two parallel runtimes, argument checking, and
ahead-of-time emission. No timings are asserted here (see bench/).
"""

from __future__ import annotations

import ctypes
import math
import re

import numpy as np
import pytest
from tilecraft.driver.context import parse_text
from tilecraft.driver.emit import emit_assembly, emit_llvm_ir, emit_object, emit_shared_library
from tilecraft.driver.kernels import compile_loop_module
from tilecraft.utils.diagnostics import OpError

RNG = np.random.default_rng(1234)
KINDS = ["serial", "parallel", "vectorized", "unrolled"]


def build(text: str, **options):
    return compile_loop_module(parse_text(text), **options)


def single(text: str, **options):
    jit = build(text, **options)
    (name,) = jit.functions
    return jit[name]


def rand(shape, dtype=np.float32, low=-2.0, high=2.0):
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(int(low), int(high), size=shape).astype(dtype)
    return RNG.uniform(low, high, size=shape).astype(dtype)


def unary_kernel(body: str, n: int, kind: str, t: str = "f32", rt: str | None = None) -> str:
    """B[i] = %r for i in a loop of the given kind, where `body` computes %r from %a."""
    rt = rt or t
    return f"""
func.func @f(%A: memref<{n}x{t}>, %B: memref<{n}x{rt}>) {{
  loop.for %i = 0 to {n} {kind} {{
    %a = memref.load %A[%i] : memref<{n}x{t}>
    {body}
    memref.store %r, %B[%i] : memref<{n}x{rt}>
  }}
  func.return
}}"""


def binary_kernel(body: str, n: int, kind: str, t: str = "f32", rt: str | None = None) -> str:
    """C[i] = %r, where `body` computes %r from %a = A[i] and %b = B[i]."""
    rt = rt or t
    return f"""
func.func @f(%A: memref<{n}x{t}>, %B: memref<{n}x{t}>, %C: memref<{n}x{rt}>) {{
  loop.for %i = 0 to {n} {kind} {{
    %a = memref.load %A[%i] : memref<{n}x{t}>
    %b = memref.load %B[%i] : memref<{n}x{t}>
    {body}
    memref.store %r, %C[%i] : memref<{n}x{rt}>
  }}
  func.return
}}"""


# Loop kinds ------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 7, 64, 100])
def test_add_every_loop_kind(kind, n):
    f = single(binary_kernel("%r = arith.addf %a, %b : f32", n, kind))
    a, b, c = rand(n), rand(n), np.zeros(n, np.float32)
    f(a, b, c)
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lb, ub", [(3, 10), (5, 90)])
def test_nonzero_lower_bound(kind, lb, ub):
    f = single(
        f"""
func.func @f(%A: memref<100xf32>, %B: memref<100xf32>) {{
  loop.for %i = {lb} to {ub} {kind} {{
    %a = memref.load %A[%i] : memref<100xf32>
    %r = arith.negf %a : f32
    memref.store %r, %B[%i] : memref<100xf32>
  }}
  func.return
}}"""
    )
    a, b = rand(100), np.zeros(100, np.float32)
    f(a, b)
    expected = np.zeros(100, np.float32)
    expected[lb:ub] = -a[lb:ub]
    np.testing.assert_array_equal(b, expected)


def test_empty_loop_does_nothing():
    f = single(
        """
func.func @f(%A: memref<4xf32>) {
  loop.for %i = 0 to 0 vectorized {
    %z = arith.constant 1.0 : f32
    memref.store %z, %A[%i] : memref<4xf32>
  }
  func.return
}"""
    )
    a = np.zeros(4, np.float32)
    f(a)
    assert not a.any()


@pytest.mark.parametrize("outer", KINDS)
@pytest.mark.parametrize("inner", KINDS)
def test_nested_kinds_2d(outer, inner):
    """C = A * 2 + B^T over a 2-D loop nest, with a nonzero lower bound inside."""
    f = single(
        f"""
func.func @f(%A: memref<6x40xf32>, %B: memref<40x6xf32>, %C: memref<6x40xf32>) {{
  loop.for %i = 0 to 6 {outer} {{
    loop.for %j = 0 to 40 {inner} {{
      %a = memref.load %A[%i, %j] : memref<6x40xf32>
      %b = memref.load %B[%j, %i] : memref<40x6xf32>
      %two = arith.constant 2.0 : f32
      %m = arith.mulf %a, %two : f32
      %s = arith.addf %m, %b : f32
      memref.store %s, %C[%i, %j] : memref<6x40xf32>
    }}
  }}
  func.return
}}"""
    )
    a, b, c = rand((6, 40)), rand((40, 6)), np.zeros((6, 40), np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, a * 2 + b.T, rtol=1e-6, atol=1e-6)


def test_nested_parallel_loops_and_captured_values():
    """An inner parallel loop inside a parallel one runs serially; the outer serial
    loop's variable and an outside constant are captured by the parallel body."""
    f = single(
        """
func.func @f(%A: memref<3x8x16xf32>, %B: memref<3x8x16xf32>) {
  %scale = arith.constant 3.0 : f32
  loop.for %r = 0 to 3 {
    %rf = arith.index_cast %r : index to i32
    %rs = arith.sitofp %rf : i32 to f32
    loop.for %i = 0 to 8 parallel {
      loop.for %j = 0 to 16 parallel {
        %a = memref.load %A[%r, %i, %j] : memref<3x8x16xf32>
        %m = arith.mulf %a, %scale : f32
        %s = arith.addf %m, %rs : f32
        memref.store %s, %B[%r, %i, %j] : memref<3x8x16xf32>
      }
    }
  }
  func.return
}"""
    )
    a, b = rand((3, 8, 16)), np.zeros((3, 8, 16), np.float32)
    f(a, b)
    np.testing.assert_allclose(
        b, a * 3 + np.arange(3, dtype=np.float32)[:, None, None], rtol=1e-6, atol=1e-6
    )


@pytest.mark.parametrize("runtime", ["pool", "pthread"])
@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_parallel_runtimes_cover_every_iteration(runtime, threads):
    f = single(
        unary_kernel("%r = arith.negf %a : f32", 37, "parallel"),
        runtime=runtime,
        num_threads=threads,
    )
    a, b = rand(37), np.zeros(37, np.float32)
    f(a, b)
    np.testing.assert_array_equal(b, -a)


# Vectorization ----------------------------------------------------------------


def test_vectorized_tail_guard_masks_lanes():
    """A split of 100 into 7 x 16 with a guard: the last vector is masked."""
    f = single(
        """
func.func @f(%A: memref<100xf32>, %B: memref<100xf32>) {
  loop.for %io = 0 to 7 parallel {
    loop.for %ii = 0 to 16 vectorized {
      %c16 = arith.constant 16 : index
      %t = arith.muli %io, %c16 : index
      %i = arith.addi %t, %ii : index
      %c100 = arith.constant 100 : index
      %in = arith.cmpi slt, %i, %c100 : index
      loop.guard %in {
        %a = memref.load %A[%i] : memref<100xf32>
        %b = arith.mulf %a, %a : f32
        memref.store %b, %B[%i] : memref<100xf32>
      }
    }
  }
  func.return
}"""
    )
    a, b = rand(100), np.zeros(100, np.float32)
    f(a, b)
    np.testing.assert_array_equal(b, a * a)


def test_vectorized_padding_whose_upper_lanes_are_always_off_reads_zeros():
    """A 62 x 5 input padded to 64 x 10 (a row above, one below; 2 columns left, 3
    right), rows as 16 lanes: a row's load mask is its row's condition and a
    constant whose lanes 7-15 are off. Where 16 floats are two registers (AVX2),
    LLVM 22 loaded that always-off upper half unmasked unless the mask is hidden
    (translate.py)."""
    f = single(
        """
func.func @f(%X: memref<62x5xf32>, %P: memref<64x10xf32>) {
  loop.for %h = 0 to 64 {
    loop.for %w = 0 to 16 vectorized {
      %c10 = arith.constant 10 : index
      %in = arith.cmpi slt, %w, %c10 : index
      loop.guard %in {
        %c1 = arith.constant 1 : index
        %c2 = arith.constant 2 : index
        %c63 = arith.constant 63 : index
        %c7 = arith.constant 7 : index
        %top = arith.cmpi sge, %h, %c1 : index
        %bottom = arith.cmpi slt, %h, %c63 : index
        %row = arith.andi %top, %bottom : i1
        %left = arith.cmpi sge, %w, %c2 : index
        %right = arith.cmpi slt, %w, %c7 : index
        %columns = arith.andi %left, %right : i1
        %inside = arith.andi %row, %columns : i1
        %v = scf.if %inside -> (f32) {
          %y = arith.subi %h, %c1 : index
          %x = arith.subi %w, %c2 : index
          %a = memref.load %X[%y, %x] : memref<62x5xf32>
          scf.yield %a : f32
        } else {
          %z = arith.constant 0.000000e+00 : f32
          scf.yield %z : f32
        }
        memref.store %v, %P[%h, %w] : memref<64x10xf32>
      }
    }
  }
  func.return
}"""
    )
    x, p = rand((62, 5)) + 10.0, np.full((64, 10), np.nan, np.float32)
    f(x, p)
    np.testing.assert_array_equal(p, np.pad(x, ((1, 1), (2, 3))))


def test_vectorized_uniform_load_under_a_mask_loads_only_when_a_lane_is_active():
    """y[i] = w[i] * x[i // 16] for i < 20, in 16-lane vectors of a loop over 2 tiles:
    x[io] is one element per tile (a uniform address under the tail mask), loaded
    once when a lane is active (tests/filecheck/transforms/loop-vectorize.mlir
    shows the scf.if); the third tile has no active lane, and x[2] is past x's
    end."""
    f = single(
        """
func.func @f(%X: memref<2xf32>, %W: memref<20xf32>, %Y: memref<20xf32>) {
  loop.for %io = 0 to 3 {
    loop.for %ii = 0 to 16 vectorized {
      %c16 = arith.constant 16 : index
      %t = arith.muli %io, %c16 : index
      %i = arith.addi %t, %ii : index
      %c20 = arith.constant 20 : index
      %in = arith.cmpi slt, %i, %c20 : index
      loop.guard %in {
        %x = memref.load %X[%io] : memref<2xf32>
        %w = memref.load %W[%i] : memref<20xf32>
        %y = arith.mulf %x, %w : f32
        memref.store %y, %Y[%i] : memref<20xf32>
      }
    }
  }
  func.return
}"""
    )
    x, w, y = rand(2), rand(20), np.zeros(20, np.float32)
    f(x, w, y)
    np.testing.assert_array_equal(y, w * np.repeat(x, 16)[:20])


def test_vectorized_gather_scatter_and_strides():
    """Transposed (stride 8), strided (stride 2) and computed (i*i % 13) accesses."""
    f = single(
        """
func.func @f(%A: memref<8x8xf32>, %S: memref<16xf32>, %G: memref<13xf32>, %T: memref<8x8xf32>, %E: memref<8xf32>, %Q: memref<8xf32>) {
  loop.for %i = 0 to 8 {
    loop.for %j = 0 to 8 vectorized {
      %a = memref.load %A[%j, %i] : memref<8x8xf32>
      memref.store %a, %T[%i, %j] : memref<8x8xf32>
    }
  }
  loop.for %j = 0 to 8 vectorized {
    %c2 = arith.constant 2 : index
    %k = arith.muli %j, %c2 : index
    %s = memref.load %S[%k] : memref<16xf32>
    memref.store %s, %E[%j] : memref<8xf32>
    %sq = arith.muli %j, %j : index
    %c13 = arith.constant 13 : index
    %m = arith.remsi %sq, %c13 : index
    %g = memref.load %G[%m] : memref<13xf32>
    memref.store %g, %Q[%j] : memref<8xf32>
  }
  func.return
}"""
    )
    a, s, g = rand((8, 8)), rand(16), rand(13)
    t, e, q = np.zeros((8, 8), np.float32), np.zeros(8, np.float32), np.zeros(8, np.float32)
    f(a, s, g, t, e, q)
    np.testing.assert_array_equal(t, a.T)
    np.testing.assert_array_equal(e, s[::2])
    np.testing.assert_array_equal(q, g[(np.arange(8) ** 2) % 13])


def test_vectorized_scatter_to_computed_addresses():
    f = single(
        """
func.func @f(%A: memref<8xf32>, %B: memref<16xf32>) {
  loop.for %j = 0 to 8 vectorized {
    %a = memref.load %A[%j] : memref<8xf32>
    %c15 = arith.constant 15 : index
    %k = arith.subi %c15, %j : index
    %c2 = arith.constant 2 : index
    %r = arith.remsi %k, %c2 : index
    %kk = arith.subi %k, %r : index
    memref.store %a, %B[%k] : memref<16xf32>
  }
  func.return
}"""
    )
    a, b = rand(8), np.zeros(16, np.float32)
    f(a, b)
    np.testing.assert_array_equal(b[15 - np.arange(8)], a)


def test_vectorized_scf_if_varying_and_uniform_conditions():
    """A lane-varying scf.if (leaky relu) and a uniform one (row parity) with results."""
    f = single(
        """
func.func @f(%A: memref<4x50xf32>, %B: memref<4x50xf32>) {
  loop.for %i = 0 to 4 {
    %c2 = arith.constant 2 : index
    %p = arith.remsi %i, %c2 : index
    %c0 = arith.constant 0 : index
    %even = arith.cmpi eq, %p, %c0 : index
    loop.for %j = 0 to 50 vectorized {
      %a = memref.load %A[%i, %j] : memref<4x50xf32>
      %z = arith.constant 0.0 : f32
      %pos = arith.cmpf ogt, %a, %z : f32
      %r = scf.if %pos -> (f32) {
        scf.yield %a : f32
      } else {
        %k = arith.constant 0.1 : f32
        %s = arith.mulf %a, %k : f32
        scf.yield %s : f32
      }
      %o = scf.if %even -> (f32) {
        scf.yield %r : f32
      } else {
        %n = arith.negf %r : f32
        scf.yield %n : f32
      }
      memref.store %o, %B[%i, %j] : memref<4x50xf32>
    }
  }
  func.return
}"""
    )
    a, b = rand((4, 50)), np.zeros((4, 50), np.float32)
    f(a, b)
    leaky = np.where(a > 0, a, a * np.float32(0.1))
    expected = np.where((np.arange(4) % 2 == 0)[:, None], leaky, -leaky)
    np.testing.assert_allclose(b, expected, rtol=1e-6)


def test_vectorized_masked_division_never_divides_by_zero_lanes():
    """Integer division under a guard that excludes zero divisors (masked lanes must not trap)."""
    f = single(
        """
func.func @f(%A: memref<32xi32>, %D: memref<32xi32>, %Q: memref<32xi32>) {
  loop.for %i = 0 to 32 vectorized {
    %d = memref.load %D[%i] : memref<32xi32>
    %z = arith.constant 0 : i32
    %ok = arith.cmpi ne, %d, %z : i32
    loop.guard %ok {
      %a = memref.load %A[%i] : memref<32xi32>
      %q = arith.divsi %a, %d : i32
      memref.store %q, %Q[%i] : memref<32xi32>
    }
  }
  func.return
}"""
    )
    a = rand(32, np.int32, -100, 100)
    d = rand(32, np.int32, -3, 4)
    q = np.full(32, 7, np.int32)
    f(a, d, q)
    nz = d != 0
    np.testing.assert_array_equal(
        q[nz], (np.abs(a[nz]) // np.abs(d[nz])) * np.sign(a[nz]) * np.sign(d[nz])
    )
    np.testing.assert_array_equal(q[~nz], 7)


def test_vectorized_reduction_into_one_address_falls_back_to_serial():
    """Every lane would store to S[i]: the loop runs serially and still sums right."""
    f = single(
        """
func.func @f(%A: memref<4x96xf32>, %S: memref<4xf32>) {
  loop.for %i = 0 to 4 parallel {
    %z = arith.constant 0.0 : f32
    memref.store %z, %S[%i] : memref<4xf32>
    loop.for %k = 0 to 96 vectorized {
      %s = memref.load %S[%i] : memref<4xf32>
      %a = memref.load %A[%i, %k] : memref<4x96xf32>
      %t = arith.addf %s, %a : f32
      memref.store %t, %S[%i] : memref<4xf32>
    }
  }
  func.return
}"""
    )
    a, s = rand((4, 96)), np.zeros(4, np.float32)
    f(a, s)
    np.testing.assert_allclose(s, a.sum(axis=1), rtol=1e-5, atol=1e-5)  # a sum near 0


def test_vectorized_loop_with_inner_serial_loop():
    """A vectorized loop around a serial one (the inner variable is uniform)."""
    f = single(
        """
func.func @f(%A: memref<5x24xf32>, %S: memref<24xf32>) {
  loop.for %j = 0 to 24 vectorized {
    %z = arith.constant 0.0 : f32
    memref.store %z, %S[%j] : memref<24xf32>
    loop.for %k = 0 to 5 {
      %s = memref.load %S[%j] : memref<24xf32>
      %a = memref.load %A[%k, %j] : memref<5x24xf32>
      %t = arith.addf %s, %a : f32
      memref.store %t, %S[%j] : memref<24xf32>
    }
  }
  func.return
}"""
    )
    a, s = rand((5, 24)), np.zeros(24, np.float32)
    f(a, s)
    np.testing.assert_allclose(s, a.sum(axis=0), rtol=1e-5)


# Buffers ----------------------------------------------------------------------


@pytest.mark.parametrize("scope", ["local", "global"])
def test_register_tiled_matmul_with_buffers(scope):
    f = single(register_tiled_matmul(24, 48, 20, mr=6, nr=16, scope=scope))
    a, b, c = rand((24, 20)), rand((20, 48)), np.zeros((24, 48), np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_unrolled_loops_are_unrolled_by_llvm(monkeypatch):
    """The pipeline leaves unrolled loops to LLVM (`llvm.loop.unroll.full`), which
    unrolls them before O3: no loop of the tile is left, and the numbers are
    those of the loop IR unrolled by loop-unroll."""
    from tilecraft.pipelines import loop_to_llvm
    from tilecraft.transforms.loop_unroll import LoopUnrollPass

    text = register_tiled_matmul(24, 48, 20, mr=6, nr=16, scope="local")
    marked = emit_llvm_ir(parse_text(text), optimize=False)
    assert marked.count("llvm.loop.unroll.full") == 1, marked  # one request node
    assert len(re.findall(r"!llvm\.loop !\d+", marked)) >= 2, marked  # the tile's loops
    assert "llvm.loop.unroll.full" not in emit_llvm_ir(parse_text(text))
    a, b = rand((24, 20)), rand((20, 48))
    by_llvm = np.zeros((24, 48), np.float32)
    single(text)(a, b, by_llvm)
    passes = loop_to_llvm.loop_to_llvm_passes()
    monkeypatch.setattr(
        loop_to_llvm, "loop_to_llvm_passes", lambda reassociate=True: (*passes[:-1], LoopUnrollPass(), passes[-1])
    )
    unrolled = emit_llvm_ir(parse_text(text), optimize=False)
    assert "llvm.loop.unroll.full" not in unrolled
    by_loop_unroll = np.zeros((24, 48), np.float32)
    single(text)(a, b, by_loop_unroll)
    np.testing.assert_allclose(by_llvm, a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(by_llvm, by_loop_unroll, rtol=1e-5, atol=1e-5)


def test_large_local_buffer_goes_to_the_heap():
    """A 'local' buffer too big for a thread's stack (1 MiB) still works."""
    f = single(
        """
func.func @f(%A: memref<262144xf32>, %B: memref<262144xf32>) {
  loop.for %p = 0 to 2 parallel {
    %T = loop.alloc "T" local : memref<262144xf32>
    loop.for %i = 0 to 262144 vectorized {
      %a = memref.load %A[%i] : memref<262144xf32>
      memref.store %a, %T[%i] : memref<262144xf32>
    }
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %p, %c0 : index
    loop.guard %first {
      loop.for %i = 0 to 262144 vectorized {
        %t = memref.load %T[%i] : memref<262144xf32>
        memref.store %t, %B[%i] : memref<262144xf32>
      }
    }
  }
  func.return
}"""
    )
    a, b = rand(262144), np.zeros(262144, np.float32)
    f(a, b)
    np.testing.assert_array_equal(a, b)


def test_zero_dimensional_memref():
    f = single(
        """
func.func @f(%A: memref<10xf64>, %S: memref<f64>) {
  %z = arith.constant 0.0 : f64
  memref.store %z, %S[] : memref<f64>
  loop.for %i = 0 to 10 {
    %s = memref.load %S[] : memref<f64>
    %a = memref.load %A[%i] : memref<10xf64>
    %t = arith.addf %s, %a : f64
    memref.store %t, %S[] : memref<f64>
  }
  func.return
}"""
    )
    a, s = rand(10, np.float64), np.zeros((), np.float64)
    f(a, s)
    assert s == pytest.approx(a.sum())


# Element types and ops ------------------------------------------------------------

FLOAT_UNARY = {
    "math.exp %a : {t}": np.exp,
    "math.log %x : {t}": lambda a: np.log(np.abs(a) + 0.5),
    "math.sqrt %x : {t}": lambda a: np.sqrt(np.abs(a) + 0.5),
    "math.rsqrt %x : {t}": lambda a: 1 / np.sqrt(np.abs(a) + 0.5),
    "math.tanh %a : {t}": np.tanh,
    "math.erf %a : {t}": np.vectorize(math.erf),
    "math.absf %a : {t}": np.abs,
    "math.floor %a : {t}": np.floor,
    "math.ceil %a : {t}": np.ceil,
    "math.sin %a : {t}": np.sin,
    "math.cos %a : {t}": np.cos,
    "arith.negf %a : {t}": np.negative,
}


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("op", list(FLOAT_UNARY))
def test_float_unary_ops(op, t, kind):
    n = 67
    body = f"""%half = arith.constant 0.5 : {t}
    %abs = math.absf %a : {t}
    %x = arith.addf %abs, %half : {t}
    %r = {op.format(t=t)}"""
    f = single(unary_kernel(body, n, kind, t))
    dtype = np.float32 if t == "f32" else np.float64
    a = rand(n, dtype, -3, 3)
    a[:4] = [0.0, -0.25, 1e-4, 0.49]  # erf's small-argument branch
    b = np.zeros(n, dtype)
    f(a, b)
    expected = FLOAT_UNARY[op](a.astype(np.float64)).astype(dtype)
    tol = 2e-6 if t == "f32" else 1e-12
    np.testing.assert_allclose(b, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("op", ["exp", "tanh", "erf"])
def test_f32_polynomial_math_over_the_whole_range(op):
    """f32 exp/tanh/erf are polynomials (mathfuncs.py): within 2 ulp of the f64
    result wherever it is a normal float, right at overflow, underflow, inf and NaN."""
    n = 4096
    f = single(unary_kernel(f"%r = math.{op} %a : f32", n, "vectorized"))
    a = RNG.uniform(-110, 95, n).astype(np.float32)
    a[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, 88.7, -103.0]
    b = np.zeros(n, np.float32)
    f(a, b)
    reference = {"exp": np.exp, "tanh": np.tanh, "erf": np.vectorize(math.erf)}[op]
    with np.errstate(all="ignore"):
        expected = reference(a.astype(np.float64)).astype(np.float32)
    normal = np.isfinite(expected) & (np.abs(expected) >= np.finfo(np.float32).tiny)
    ulps = np.abs(b[normal].astype(np.float64) - expected[normal]) / np.spacing(expected[normal])
    assert ulps.max() <= 2
    np.testing.assert_allclose(b[~normal], expected[~normal], atol=1e-44)


FLOAT_BINARY = {
    "arith.addf %a, %b : {t}": np.add,
    "arith.subf %a, %b : {t}": np.subtract,
    "arith.mulf %a, %b : {t}": np.multiply,
    "arith.divf %a, %b : {t}": np.divide,
    "arith.maximumf %a, %b : {t}": np.maximum,
    "arith.minimumf %a, %b : {t}": np.minimum,
    "math.powf %x, %b : {t}": lambda a, b: np.power(np.abs(a) + 0.5, b),
}


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("op", list(FLOAT_BINARY))
def test_float_binary_ops(op, t, kind):
    n = 40
    body = f"""%half = arith.constant 0.5 : {t}
    %abs = math.absf %a : {t}
    %x = arith.addf %abs, %half : {t}
    %r = {op.format(t=t)}"""
    text = binary_kernel(body, n, kind, t)
    f = single(text)
    dtype = np.float32 if t == "f32" else np.float64
    a, b, c = rand(n, dtype), rand(n, dtype), np.zeros(n, dtype)
    a[0], b[1] = np.nan, np.nan  # maximumf/minimumf propagate NaN like numpy
    f(a, b, c)
    with np.errstate(invalid="ignore"):
        expected = FLOAT_BINARY[op](a, b)
    np.testing.assert_allclose(c, expected, rtol=1e-6, equal_nan=True)


def test_fma_and_cmpf_select():
    f = single(
        """
func.func @f(%A: memref<33xf32>, %B: memref<33xf32>, %C: memref<33xf32>) {
  loop.for %i = 0 to 33 vectorized {
    %a = memref.load %A[%i] : memref<33xf32>
    %b = memref.load %B[%i] : memref<33xf32>
    %f = math.fma %a, %b, %a : f32
    %lt = arith.cmpf olt, %a, %b : f32
    %s = arith.select %lt, %f, %b : f32
    memref.store %s, %C[%i] : memref<33xf32>
  }
  func.return
}"""
    )
    a, b, c = rand(33), rand(33), np.zeros(33, np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, np.where(a < b, a * b + a, b), rtol=1e-6)


INT_BINARY = {
    "arith.addi %a, %b : {t}": np.add,
    "arith.subi %a, %b : {t}": np.subtract,
    "arith.muli %a, %b : {t}": np.multiply,
    "arith.divsi %a, %b : {t}": lambda a, b: np.fix(a / b).astype(a.dtype),
    "arith.remsi %a, %b : {t}": np.fmod,
    "arith.floordivsi %a, %b : {t}": np.floor_divide,
    "arith.ceildivsi %a, %b : {t}": lambda a, b: -np.floor_divide(-a, b),
    "arith.maxsi %a, %b : {t}": np.maximum,
    "arith.minsi %a, %b : {t}": np.minimum,
    "arith.andi %a, %b : {t}": np.bitwise_and,
    "arith.ori %a, %b : {t}": np.bitwise_or,
    "arith.xori %a, %b : {t}": np.bitwise_xor,
}


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
@pytest.mark.parametrize("t", ["i8", "i32", "i64"])
@pytest.mark.parametrize("op", list(INT_BINARY))
def test_int_binary_ops(op, t, kind):
    n = 70
    f = single(binary_kernel("%r = " + op.format(t=t), n, kind, t))
    dtype = {"i8": np.int8, "i32": np.int32, "i64": np.int64}[t]
    a = rand(n, dtype, -10, 11)
    b = rand(n, dtype, 1, 6) * np.where(RNG.random(n) < 0.5, -1, 1).astype(
        dtype
    )  # no zero divisors
    c = np.zeros(n, dtype)
    f(a, b, c)
    np.testing.assert_array_equal(c, INT_BINARY[op](a, b).astype(dtype))


def _python_division(op: str, x: int, y: int) -> int:
    """What tilecraft's integer divisions give (numpy's convention at 0)."""
    if y == 0:
        return 0
    trunc = abs(x) // abs(y) * (1 if (x >= 0) == (y > 0) else -1)
    return {
        "divsi": trunc,
        "remsi": x - trunc * y,
        "floordivsi": x // y,
        "ceildivsi": -(-x // y),
    }[op]


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
@pytest.mark.parametrize("t", ["i8", "i32", "i64"])
@pytest.mark.parametrize("op", ["divsi", "remsi", "floordivsi", "ceildivsi"])
def test_int_division_by_zero_and_overflow_never_trap(op, t, kind):
    """x / 0 is 0 and MIN / -1 wraps (numpy), instead of SIGFPE."""
    n = 40
    f = single(binary_kernel(f"%r = arith.{op} %a, %b : {t}", n, kind, t))
    dtype = {"i8": np.int8, "i32": np.int32, "i64": np.int64}[t]
    info = np.iinfo(dtype)
    a = rand(n, dtype, -10, 11)
    a[::3] = info.min
    b = rand(n, dtype, -2, 3)  # zeros and -1s among them
    b[:4] = [0, -1, 0, -1]
    c = np.zeros(n, dtype)
    f(a, b, c)
    wrap = lambda v: (v - int(info.min)) % (1 << info.bits) + int(info.min)  # noqa: E731
    expected = [wrap(_python_division(op, int(x), int(y))) for x, y in zip(a, b)]
    np.testing.assert_array_equal(c, np.array(expected, dtype))


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_casts(kind):
    f = single(
        f"""
func.func @f(%A: memref<50xf32>, %I: memref<50xi32>, %F: memref<50xf64>, %J: memref<50xi64>, %U: memref<50xi8>, %G: memref<50xf32>) {{
  loop.for %i = 0 to 50 {kind} {{
    %a = memref.load %A[%i] : memref<50xf32>
    %si = arith.fptosi %a : f32 to i32
    memref.store %si, %I[%i] : memref<50xi32>
    %d = arith.extf %a : f32 to f64
    memref.store %d, %F[%i] : memref<50xf64>
    %l = arith.extsi %si : i32 to i64
    %ii = arith.index_cast %i : index to i64
    %sum = arith.addi %l, %ii : i64
    memref.store %sum, %J[%i] : memref<50xi64>
    %absa = math.absf %a : f32
    %ui = arith.fptoui %absa : f32 to i32
    %t8 = arith.trunci %ui : i32 to i8
    memref.store %t8, %U[%i] : memref<50xi8>
    %z8 = arith.extui %t8 : i8 to i32
    %uf = arith.uitofp %z8 : i32 to f32
    %sf = arith.sitofp %si : i32 to f32
    %back = arith.truncf %d : f64 to f32
    %g0 = arith.addf %uf, %sf : f32
    %g = arith.addf %g0, %back : f32
    memref.store %g, %G[%i] : memref<50xf32>
  }}
  func.return
}}"""
    )
    a = rand(50, np.float32, -100, 100)
    outs = [np.zeros(50, d) for d in (np.int32, np.float64, np.int64, np.int8, np.float32)]
    f(a, *outs)
    si = np.trunc(a).astype(np.int32)
    u8 = np.trunc(np.abs(a)).astype(np.int32).astype(np.int8)
    np.testing.assert_array_equal(outs[0], si)
    np.testing.assert_array_equal(outs[1], a.astype(np.float64))
    np.testing.assert_array_equal(outs[2], si.astype(np.int64) + np.arange(50))
    np.testing.assert_array_equal(outs[3], u8)
    expected = u8.view(np.uint8).astype(np.float32) + si.astype(np.float32) + a
    np.testing.assert_allclose(outs[4], expected, rtol=1e-6)


@pytest.mark.parametrize("kind", ["serial", "vectorized"])
def test_bool_buffers(kind):
    """i1 buffers are numpy bools (one byte each), read and written."""
    f = single(
        f"""
func.func @f(%A: memref<45xf32>, %M: memref<45xi1>, %O: memref<45xi1>, %B: memref<45xf32>) {{
  loop.for %i = 0 to 45 {kind} {{
    %a = memref.load %A[%i] : memref<45xf32>
    %m = memref.load %M[%i] : memref<45xi1>
    %z = arith.constant 0.0 : f32
    %pos = arith.cmpf oge, %a, %z : f32
    %both = arith.andi %pos, %m : i1
    memref.store %both, %O[%i] : memref<45xi1>
    %b = arith.select %m, %a, %z : f32
    memref.store %b, %B[%i] : memref<45xf32>
  }}
  func.return
}}"""
    )
    a, m = rand(45), RNG.random(45) < 0.5
    o, b = np.zeros(45, bool), np.zeros(45, np.float32)
    f(a, m, o, b)
    np.testing.assert_array_equal(o, (a >= 0) & m)
    np.testing.assert_array_equal(b, np.where(m, a, 0))


def test_several_functions_in_one_module():
    jit = build(
        unary_kernel("%r = arith.negf %a : f32", 8, "serial")
        + unary_kernel("%r = arith.addf %a, %a : f32", 8, "vectorized").replace("@f", "@g")
    )
    assert sorted(jit.functions) == ["f", "g"]
    a, b = rand(8), np.zeros(8, np.float32)
    jit["g"](a, b)
    np.testing.assert_array_equal(b, a + a)


# Argument checking ------------------------------------------------------------------


@pytest.fixture(scope="module")
def matmul():
    return single(
        """
func.func @mm(%A: memref<4x3xf32> {tc.name = "A"}, %B: memref<3x5xf32> {tc.name = "B"}, %C: memref<4x5xf32>) {
  loop.for %i = 0 to 4 {
    loop.for %j = 0 to 5 vectorized {
      %z = arith.constant 0.0 : f32
      memref.store %z, %C[%i, %j] : memref<4x5xf32>
      loop.for %k = 0 to 3 {
        %a = memref.load %A[%i, %k] : memref<4x3xf32>
        %b = memref.load %B[%k, %j] : memref<3x5xf32>
        %c = memref.load %C[%i, %j] : memref<4x5xf32>
        %m = arith.mulf %a, %b : f32
        %s = arith.addf %c, %m : f32
        memref.store %s, %C[%i, %j] : memref<4x5xf32>
      }
    }
  }
  func.return
}"""
    )


def test_signature(matmul):
    assert matmul.name == "mm"
    assert matmul.arg_names == ["A", "B", "arg2"]
    assert matmul.arg_types == [((4, 3), np.float32), ((3, 5), np.float32), ((4, 5), np.float32)]
    a, b, c = rand((4, 3)), rand((3, 5)), np.zeros((4, 5), np.float32)
    matmul(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda a, b, c: (a, b), r"mm\(\) takes 3 arrays \(A, B, arg2\), got 2"),
        (
            lambda a, b, c: (a.tolist(), b, c),
            r"argument 'A' \(#1\) must be a numpy array, got list",
        ),
        (
            lambda a, b, c: (a, np.zeros((3, 6), np.float32), c),
            r"argument 'B' \(#2\) has shape \(3, 6\), expected \(3, 5\)",
        ),
        (
            lambda a, b, c: (a, b.astype(np.float64), c),
            r"argument 'B' \(#2\) has dtype float64, expected float32",
        ),
        (lambda a, b, c: (np.asfortranarray(a), b, c), r"argument 'A' \(#1\) is not C-contiguous"),
        (
            lambda a, b, c: (a, b, np.zeros((5, 4), np.float32).T),
            r"argument 'arg2' \(#3\) is not C-contiguous",
        ),
        (
            lambda a, b, c: (a, b, _readonly(c)),
            r"argument 'arg2' \(#3\) is an output but is not writeable",
        ),
        (lambda a, b, c: (a, b, _misaligned((4, 5))), r"argument 'arg2' \(#3\) is not aligned"),
    ],
)
def test_bad_arguments_are_rejected(matmul, make, message):
    a, b, c = rand((4, 3)), rand((3, 5)), np.zeros((4, 5), np.float32)
    with pytest.raises(ValueError, match=message):
        matmul(*make(a, b, c))


def test_output_overlapping_an_input_is_rejected():
    f = single(unary_kernel("%r = arith.negf %a : f32", 8, "serial"))
    buffer = np.zeros(16, np.float32)
    with pytest.raises(
        ValueError, match=r"argument 'arg1' \(#2\) is an output and overlaps argument 'arg0' \(#1\)"
    ):
        f(buffer[:8], buffer[4:12])
    f(buffer[:8], buffer[8:])  # adjacent is fine


def test_unknown_function_name(matmul):
    jit = build(unary_kernel("%r = arith.negf %a : f32", 8, "serial"))
    with pytest.raises(KeyError, match="no function 'g'"):
        jit["g"]


def _readonly(array):
    array.flags.writeable = False
    return array


def _misaligned(shape):
    raw = np.zeros(int(np.prod(shape)) * 4 + 1, np.uint8)
    return raw[1:].view(np.float32).reshape(shape)


# Errors ----------------------------------------------------------------------------


def test_unsupported_op_names_the_op():
    text = """
func.func @f(%A: memref<4xf32>) {
  loop.for %i = 0 to 4 {
    %a = memref.load %A[%i] : memref<4xf32>
    %b = math.cbrt %a : f32
    memref.store %b, %A[%i] : memref<4xf32>
  }
  func.return
}"""
    with pytest.raises(
        OpError, match=r"k.mlir:5:5: error: convert-loop-to-llvm: 'math.cbrt' is not supported"
    ):
        compile_loop_module(parse_text(text, "k.mlir"))


def test_non_memref_argument_is_rejected():
    text = "func.func @f(%x: f32) {\n  func.return\n}"
    with pytest.raises(OpError, match="only memrefs are supported"):
        compile_loop_module(parse_text(text))


# Ahead of time ---------------------------------------------------------------------


def test_emitters_and_shared_library(tmp_path):
    text = register_tiled_matmul(12, 32, 8, mr=6, nr=16, scope="local")
    module = parse_text(text)
    # (12 x 32 x 8 is too small for a second thread: the loop runs on the caller,
    # inlined, and LLVM adds what it infers about the buffers.)
    assert re.search(
        r"define void @matmul\(ptr noalias nonnull (readonly )?align 4 (captures\(none\) )?dereferenceable\(384\)",
        emit_llvm_ir(module),
    )
    assert "vfmadd" in emit_assembly(module)
    assert emit_object(module)[:4] == b"\x7fELF"
    library = tmp_path / "libmm.so"
    emit_shared_library(module, library)
    native = ctypes.CDLL(str(library))
    a, b, c = rand((12, 8)), rand((8, 32)), np.zeros((12, 32), np.float32)
    native.matmul(*(x.ctypes.data_as(ctypes.c_void_p) for x in (a, b, c)))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_packed_register_tiled_matmul():
    """The shape of a fast CPU matmul: B packed per column panel into a global
    buffer, k blocked, an accumulator tile initialised by a uniform scf.if (zero
    on the first k block, C otherwise) inside unrolled and vectorized loops."""
    f = single(packed_matmul(96, 128, 64, mr=4, nr=32, kc=16))
    a, b, c = rand((96, 64)), rand((64, 128)), np.zeros((96, 128), np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def packed_matmul(m: int, n: int, k: int, mr: int, nr: int, kc: int) -> str:
    """C = A @ B, register-tiled (mr x nr) with B packed per nr-wide column panel
    and k blocked by kc; column panels in parallel. With mr=4, nr=64, kc=256 this
    is the kernel behind the GFLOP/s quoted for the backend."""
    return f"""
func.func @matmul(%A: memref<{m}x{k}xf32> {{tc.name = "A"}}, %B: memref<{k}x{n}xf32> {{tc.name = "B"}}, %C: memref<{m}x{n}xf32> {{tc.name = "C"}}) {{
  loop.for %jo = 0 to {n // nr} parallel {{
    %cnr = arith.constant {nr} : index
    %j0 = arith.muli %jo, %cnr : index
    %Bp = loop.alloc "B.packed" global : memref<{k}x{nr}xf32>
    loop.for %kk = 0 to {k} {{
      loop.for %j = 0 to {nr} vectorized {{
        %jj = arith.addi %j0, %j : index
        %b = memref.load %B[%kk, %jj] : memref<{k}x{n}xf32>
        memref.store %b, %Bp[%kk, %j] : memref<{k}x{nr}xf32>
      }}
    }}
    loop.for %ko = 0 to {k // kc} {{
      %ckc = arith.constant {kc} : index
      %k0 = arith.muli %ko, %ckc : index
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %ko, %c0 : index
      loop.for %io = 0 to {m // mr} {{
        %cmr = arith.constant {mr} : index
        %i0 = arith.muli %io, %cmr : index
        %acc = loop.alloc "C.local" local : memref<{mr}x{nr}xf32>
        loop.for %ii = 0 to {mr} unrolled {{
          loop.for %j = 0 to {nr} vectorized {{
            %i = arith.addi %i0, %ii : index
            %jj = arith.addi %j0, %j : index
            %v = scf.if %first -> (f32) {{
              %z = arith.constant 0.0 : f32
              scf.yield %z : f32
            }} else {{
              %c = memref.load %C[%i, %jj] : memref<{m}x{n}xf32>
              scf.yield %c : f32
            }}
            memref.store %v, %acc[%ii, %j] : memref<{mr}x{nr}xf32>
          }}
        }}
        loop.for %ki = 0 to {kc} {{
          %kk = arith.addi %k0, %ki : index
          loop.for %ii = 0 to {mr} unrolled {{
            loop.for %j = 0 to {nr} vectorized {{
              %i = arith.addi %i0, %ii : index
              %a = memref.load %A[%i, %kk] : memref<{m}x{k}xf32>
              %b = memref.load %Bp[%kk, %j] : memref<{k}x{nr}xf32>
              %c = memref.load %acc[%ii, %j] : memref<{mr}x{nr}xf32>
              %p = arith.mulf %a, %b : f32
              %s = arith.addf %c, %p : f32
              memref.store %s, %acc[%ii, %j] : memref<{mr}x{nr}xf32>
            }}
          }}
        }}
        loop.for %ii = 0 to {mr} unrolled {{
          loop.for %j = 0 to {nr} vectorized {{
            %i = arith.addi %i0, %ii : index
            %jj = arith.addi %j0, %j : index
            %v = memref.load %acc[%ii, %j] : memref<{mr}x{nr}xf32>
            memref.store %v, %C[%i, %jj] : memref<{m}x{n}xf32>
          }}
        }}
      }}
    }}
  }}
  func.return
}}"""


def register_tiled_matmul(m: int, n: int, k: int, mr: int, nr: int, scope: str) -> str:
    """C = A @ B with an mr x nr accumulator tile in a buffer, rows in parallel."""
    return f"""
func.func @matmul(%A: memref<{m}x{k}xf32> {{tc.name = "A"}}, %B: memref<{k}x{n}xf32> {{tc.name = "B"}}, %C: memref<{m}x{n}xf32> {{tc.name = "C"}}) {{
  loop.for %io = 0 to {m // mr} parallel {{
    loop.for %jo = 0 to {n // nr} {{
      %acc = loop.alloc "C.local" {scope} : memref<{mr}x{nr}xf32>
      loop.for %ii = 0 to {mr} unrolled {{
        loop.for %ji = 0 to {nr} vectorized {{
          %z = arith.constant 0.0 : f32
          memref.store %z, %acc[%ii, %ji] : memref<{mr}x{nr}xf32>
        }}
      }}
      %cmr = arith.constant {mr} : index
      %cnr = arith.constant {nr} : index
      %i0 = arith.muli %io, %cmr : index
      %j0 = arith.muli %jo, %cnr : index
      loop.for %kk = 0 to {k} {{
        loop.for %ii = 0 to {mr} unrolled {{
          loop.for %ji = 0 to {nr} vectorized {{
            %i = arith.addi %i0, %ii : index
            %j = arith.addi %j0, %ji : index
            %a = memref.load %A[%i, %kk] : memref<{m}x{k}xf32>
            %b = memref.load %B[%kk, %j] : memref<{k}x{n}xf32>
            %c = memref.load %acc[%ii, %ji] : memref<{mr}x{nr}xf32>
            %p = arith.mulf %a, %b : f32
            %s = arith.addf %c, %p : f32
            memref.store %s, %acc[%ii, %ji] : memref<{mr}x{nr}xf32>
          }}
        }}
      }}
      loop.for %ii = 0 to {mr} unrolled {{
        loop.for %ji = 0 to {nr} vectorized {{
          %i = arith.addi %i0, %ii : index
          %j = arith.addi %j0, %ji : index
          %c = memref.load %acc[%ii, %ji] : memref<{mr}x{nr}xf32>
          memref.store %c, %C[%i, %j] : memref<{m}x{n}xf32>
        }}
      }}
    }}
  }}
  func.return
}}"""


def test_jit_runs_what_tilecraft_opt_prints(tmp_path):
    """The JIT lowers with the pipeline loop-to-llvm: the same text as
    `tilecraft-opt -p lower-tensor-intrin,expand-dma,loop-partition,loop-unroll{trivial-only=true},loop-outline-parallel,loop-vectorize,convert-loop-to-llvm`."""
    import subprocess
    import sys
    from pathlib import Path

    from tilecraft.pipelines.loop_to_llvm import lower_to_llvm_dialect
    from tilecraft.pipelines.loop_to_llvm import LOOP_TO_LLVM

    assert LOOP_TO_LLVM == (
        "lower-tensor-intrin",
        "expand-dma",
        "loop-partition",
        "loop-unroll{trivial-only=true}",
        "loop-outline-parallel",
        "loop-vectorize",
        "convert-loop-to-llvm",
    )
    text = register_tiled_matmul(24, 48, 20, mr=6, nr=16, scope="local")
    source = tmp_path / "matmul.mlir"
    source.write_text(text)
    opt = Path(sys.executable).parent / "tilecraft-opt"
    printed = subprocess.run(
        [str(opt), str(source), "-p", ",".join(LOOP_TO_LLVM)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed.strip() == str(lower_to_llvm_dialect(parse_text(text))).strip()


def test_unrolled_copies_of_a_large_local_buffer_share_a_stack_slot():
    """loop-unroll copies a buffer per iteration; copies over 4 KiB share one
    stack slot (a worker thread's stack is small), and each copy still works."""
    from tilecraft.pipelines.loop_to_llvm import lower_to_llvm_dialect

    text = """
func.func @f(%A: memref<4x2048xf32>, %B: memref<4x2048xf32>) {
  loop.for %u = 0 to 4 unrolled {
    %T = loop.alloc "T" local : memref<2048xf32>
    loop.for %i = 0 to 2048 vectorized {
      %a = memref.load %A[%u, %i] : memref<4x2048xf32>
      %d = arith.addf %a, %a : f32
      memref.store %d, %T[%i] : memref<2048xf32>
    }
    loop.for %i = 0 to 2048 vectorized {
      %t = memref.load %T[%i] : memref<2048xf32>
      memref.store %t, %B[%u, %i] : memref<4x2048xf32>
    }
  }
  func.return
}"""
    lowered = str(lower_to_llvm_dialect(parse_text(text)))
    assert lowered.count("!llvm.array<2048 x f32>") == 1
    f = single(text)
    a, b = rand((4, 2048)), np.zeros((4, 2048), np.float32)
    f(a, b)
    np.testing.assert_array_equal(b, a + a)


@pytest.mark.parametrize("n", [108, 7, 45])
def test_vectorized_tails_are_power_of_two_vectors(n):
    """A vectorized loop whose extent is not a multiple of the vector width has a
    power-of-two tail with its extra lanes masked off, so LLVM never sees a
    `<44 x float>` masked gather, whose code generation takes minutes."""
    text = f"""
func.func @f(%A: memref<{3 * n}xf32>, %B: memref<{n}xf32>) {{
  %c3 = arith.constant 3 : index
  %lim = arith.constant {n - 3} : index
  loop.for %i = 0 to {n} vectorized {{
    %in = arith.cmpi slt, %i, %lim : index
    loop.guard %in {{
      %j = arith.muli %i, %c3 : index
      %a = memref.load %A[%j] : memref<{3 * n}xf32>
      %e = math.exp %a : f32
      memref.store %e, %B[%i] : memref<{n}xf32>
    }}
  }}
  func.return
}}"""
    ir = emit_llvm_ir(parse_text(text))
    widths = {int(w) for w in re.findall(r"<(\d+) x ", ir)}
    assert widths and all(w & (w - 1) == 0 for w in widths), sorted(widths)
    f = single(text)
    a, b = rand(3 * n), np.zeros(n, np.float32)
    f(a, b)
    expected = np.zeros(n, np.float32)
    expected[: n - 3] = np.exp(a[: 3 * (n - 3) : 3])
    np.testing.assert_allclose(b, expected, rtol=1e-6)
