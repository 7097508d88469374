"""Every schedule computes what the te program says: LLVM-compiled results vs numpy.

Each case is te IR text plus a schedule; the compiled function's outputs are
compared with the numpy reference evaluation of the same te function (which
ignores the schedule), and with a direct numpy formula where one is handy.
Property tests draw random legal schedules on random (often awkward) shapes.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schedule_gen import ScheduleWriter

from tilecraft.driver.kernels import compile_loop_module
from tilecraft.backends.reference import evaluate
from tilecraft.driver.context import lower_to_loops, parse_text
from tilecraft.dialects.te import compute_ops


def run_both(text: str, inputs: list[np.ndarray], entry: str = "f"):
    """(compiled outputs, reference outputs) of the te function `entry` in `text`."""
    ref_module = parse_text(text)
    func_op = next(op for op in ref_module.body.block.ops if getattr(op, "sym_name", None) and op.sym_name.data == entry)
    expected = evaluate(func_op, inputs)
    module = lower_to_loops(parse_text(text))
    fn = compile_loop_module(module)[entry]
    outs = [np.zeros(e.shape, e.dtype) for e in expected]
    fn(*inputs, *outs)
    return outs, expected


def check(text: str, inputs: list[np.ndarray], entry: str = "f", rtol=1e-5, atol=1e-5):
    got, expected = run_both(text, inputs, entry)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
    return got


def matmul_text(m: int, n: int, k: int, schedule: str = "") -> str:
    return f"""
func.func @f(%A: tensor<{m}x{k}xf32>, %B: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %C = te.compute "C" (%i: "i", %j: "j") -> tensor<{m}x{n}xf32> {{
    %s = te.reduce sum (%k: "k" = 0 to {k}) -> f32 {{
      %a = te.read %A[%i, %k] : tensor<{m}x{k}xf32>
      %b = te.read %B[%k, %j] : tensor<{k}x{n}xf32>
      %p = arith.mulf %a, %b : f32
      te.yield %p : f32
    }}
    te.yield %s : f32
  }}
{schedule}  func.return %C : tensor<{m}x{n}xf32>
}}
"""


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def sched(*lines: str) -> str:
    return "  sched.schedule {\n" + "\n".join("    " + s for s in lines) + "\n  }\n"


MATMUL_SCHEDULES = {
    "naive": "",
    "tile_vec_par": sched(
        '%s = sched.stage %C : tensor<{m}x{n}xf32>',
        '%i = sched.axis %s "i"', '%j = sched.axis %s "j"', '%k = sched.axis %s "k"',
        "%io, %jo, %ii, %ji = sched.tile %i, %j by 4, 8",
        "sched.reorder %io, %jo, %k, %ii, %ji",
        "sched.vectorize %ji", "sched.parallel %io", "sched.unroll %ii",
    ),
    "cache_write_pack": sched(
        '%s = sched.stage %C : tensor<{m}x{n}xf32>',
        '%CL = sched.cache_write %s "local"',
        '%sb = sched.stage %B : tensor<{k}x{n}xf32>',
        '%BB = sched.cache_read %sb "global" for %CL',
        '%i = sched.axis %s "i"', '%j = sched.axis %s "j"',
        "%io, %jo, %ii, %ji = sched.tile %i, %j by 3, 16",
        "sched.compute_at %CL, %jo",
        '%ci = sched.axis %CL "i"', '%cj = sched.axis %CL "j"', '%ck = sched.axis %CL "k"',
        "%ko, %ki = sched.split %ck by 5",
        "sched.reorder %ko, %ki, %ci, %cj",
        "sched.compute_at %BB, %ko",
        "sched.unroll %ci", "sched.vectorize %cj", "sched.parallel %io",
    ),
    "fuse_parallel": sched(
        '%s = sched.stage %C : tensor<{m}x{n}xf32>',
        '%i = sched.axis %s "i"', '%j = sched.axis %s "j"',
        "%f = sched.fuse %i, %j",
        "%o, %n = sched.split %f into 3",
        "sched.parallel %o",
    ),
    "reduce_split_nparts": sched(
        '%s = sched.stage %C : tensor<{m}x{n}xf32>',
        '%k = sched.axis %s "k"', '%j = sched.axis %s "j"',
        "%ko, %ki = sched.split %k into 3",
        "sched.reorder %ko, %j, %ki",
    ),
}


@pytest.mark.parametrize("name", sorted(MATMUL_SCHEDULES))
@pytest.mark.parametrize("shape", [(16, 32, 8), (13, 17, 11), (1, 1, 1), (7, 33, 29)])
def test_matmul_schedules(name, shape):
    m, n, k = shape
    schedule = MATMUL_SCHEDULES[name].replace("{m}", str(m)).replace("{n}", str(n)).replace("{k}", str(k))
    text = matmul_text(m, n, k, schedule)
    a, b = rand(m, k, seed=1), rand(k, n, seed=2)
    (c,) = check(text, [a, b], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


STENCIL = """
func.func @f(%A: tensor<{n2}xf32>) -> tensor<{n}xf32> {{
  %B = te.compute "B" (%i: "i") -> tensor<{n2}xf32> {{
    %a = te.read %A[%i] : tensor<{n2}xf32>
    %e = math.exp %a : f32
    te.yield %e : f32
  }}
  %C = te.compute "C" (%i: "i") -> tensor<{n}xf32> {{
    %s = te.reduce sum (%r: "r" = 0 to 3) -> f32 {{
      %x = arith.addi %i, %r : index
      %b = te.read %B[%x] : tensor<{n2}xf32>
      te.yield %b : f32
    }}
    te.yield %s : f32
  }}
  sched.schedule {{
    %sc = sched.stage %C : tensor<{n}xf32>
    %sb = sched.stage %B : tensor<{n2}xf32>
    %i = sched.axis %sc "i"
    %o, %n = sched.split %i by {factor}
    sched.compute_at %sb, %o
    {extra}
  }}
  func.return %C : tensor<{n}xf32>
}}
"""


@pytest.mark.parametrize("n,factor", [(16, 4), (10, 4), (7, 16), (1, 1)])
@pytest.mark.parametrize("extra", ["", 'sched.parallel %o', 'sched.vectorize %n'])
def test_compute_at_stencil(n, factor, extra):
    text = STENCIL.format(n=n, n2=n + 2, factor=factor, extra=extra)
    a = rand(n + 2)
    (c,) = check(text, [a])
    e = np.exp(a)
    np.testing.assert_allclose(c, e[:-2] + e[1:-1] + e[2:], rtol=1e-5)


SOFTMAX = """
func.func @f(%X: tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %M = te.compute "M" (%i: "i") -> tensor<{m}xf32> {{
    %r = te.reduce max (%k: "k" = 0 to {n}) -> f32 {{
      %x = te.read %X[%i, %k] : tensor<{m}x{n}xf32>
      te.yield %x : f32
    }}
    te.yield %r : f32
  }}
  %E = te.compute "E" (%i: "i", %j: "j") -> tensor<{m}x{n}xf32> {{
    %x = te.read %X[%i, %j] : tensor<{m}x{n}xf32>
    %mx = te.read %M[%i] : tensor<{m}xf32>
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    te.yield %e : f32
  }}
  %S = te.compute "S" (%i: "i") -> tensor<{m}xf32> {{
    %r = te.reduce sum (%k: "k" = 0 to {n}) -> f32 {{
      %e = te.read %E[%i, %k] : tensor<{m}x{n}xf32>
      te.yield %e : f32
    }}
    te.yield %r : f32
  }}
  %Y = te.compute "Y" (%i: "i", %j: "j") -> tensor<{m}x{n}xf32> {{
    %e = te.read %E[%i, %j] : tensor<{m}x{n}xf32>
    %s = te.read %S[%i] : tensor<{m}xf32>
    %y = arith.divf %e, %s : f32
    te.yield %y : f32
  }}
{schedule}  func.return %Y : tensor<{m}x{n}xf32>
}}
"""


@pytest.mark.parametrize("m,n", [(4, 16), (3, 7)])
@pytest.mark.parametrize("scheduled", [False, True])
def test_softmax_stages(m, n, scheduled):
    schedule = ""
    if scheduled:
        # M and S per row at Y's row loop; E at the root (read by S and Y).
        schedule = sched(
            f"%sy = sched.stage %Y : tensor<{m}x{n}xf32>",
            f"%sm = sched.stage %M : tensor<{m}xf32>",
            f"%ss = sched.stage %S : tensor<{m}xf32>",
            '%i = sched.axis %sy "i"', '%j = sched.axis %sy "j"',
            "sched.compute_at %ss, %i",
            "sched.parallel %i", "sched.vectorize %j",
        )
    text = SOFTMAX.format(m=m, n=n, schedule=schedule)
    x = rand(m, n)
    (y,) = check(text, [x])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5)


PAD_CONV = """
func.func @f(%A: tensor<{n}xf32>, %W: tensor<3xf32>) -> tensor<{n}xf32> {{
  %P = te.compute "P" (%i: "i") -> tensor<{n2}xf32> {{
    %c1 = arith.constant 1 : index
    %cn = arith.constant {n1} : index
    %lo = arith.cmpi sge, %i, %c1 : index
    %hi = arith.cmpi slt, %i, %cn : index
    %in = arith.andi %lo, %hi : i1
    %v = scf.if %in -> (f32) {{
      %x = arith.subi %i, %c1 : index
      %a = te.read %A[%x] : tensor<{n}xf32>
      scf.yield %a : f32
    }} else {{
      %z = arith.constant 0.0 : f32
      scf.yield %z : f32
    }}
    te.yield %v : f32
  }}
  %C = te.compute "C" (%i: "i") -> tensor<{n}xf32> {{
    %s = te.reduce sum (%r: "r" = 0 to 3) -> f32 {{
      %x = arith.addi %i, %r : index
      %p = te.read %P[%x] : tensor<{n2}xf32>
      %w = te.read %W[%r] : tensor<3xf32>
      %m = arith.mulf %p, %w : f32
      te.yield %m : f32
    }}
    te.yield %s : f32
  }}
{schedule}  func.return %C : tensor<{n}xf32>
}}
"""


@pytest.mark.parametrize("n", [1, 5, 32])
@pytest.mark.parametrize("mode", ["root", "inline", "at"])
def test_padded_conv1d(n, mode):
    schedule = ""
    if mode == "inline":
        schedule = sched(f"%sp = sched.stage %P : tensor<{n + 2}xf32>", "sched.compute_inline %sp")
    elif mode == "at":
        schedule = sched(
            f"%sp = sched.stage %P : tensor<{n + 2}xf32>",
            f"%sc = sched.stage %C : tensor<{n}xf32>",
            '%i = sched.axis %sc "i"', "%o, %q = sched.split %i by 4",
            "sched.compute_at %sp, %o",
        )
    text = PAD_CONV.format(n=n, n1=n + 1, n2=n + 2, schedule=schedule)
    a, w = rand(n), rand(3, seed=5)
    (c,) = check(text, [a, w])
    np.testing.assert_allclose(c, np.convolve(np.pad(a, 1), w[::-1], mode="valid"), rtol=1e-5, atol=1e-6)


INT_SUM = """
func.func @f(%A: tensor<{m}x{n}xi32>) -> tensor<{m}xi32> {{
  %C = te.compute "C" (%i: "i") -> tensor<{m}xi32> {{
    %s = te.reduce {kind} (%k: "k" = 0 to {n}) -> i32 {{
      %a = te.read %A[%i, %k] : tensor<{m}x{n}xi32>
      te.yield %a : i32
    }}
    te.yield %s : i32
  }}
  func.return %C : tensor<{m}xi32>
}}
"""


@pytest.mark.parametrize("kind,fn", [("sum", np.sum), ("max", np.max), ("min", np.min)])
def test_integer_reductions(kind, fn):
    a = np.random.default_rng(3).integers(-1000, 1000, size=(5, 9)).astype(np.int32)
    (c,) = check(INT_SUM.format(m=5, n=9, kind=kind), [a])
    np.testing.assert_array_equal(c, fn(a, axis=1))


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    m=st.integers(1, 24), n=st.integers(1, 40), k=st.integers(1, 20),
    seed=st.integers(0, 2**31), cache=st.booleans(),
)
def test_random_matmul_schedules(m, n, k, seed, cache):
    rng = random.Random(seed)
    w = ScheduleWriter(rng)
    tt = f"tensor<{m}x{n}xf32>"
    s = w.stage("%C", tt)
    if cache:
        cl = w.fresh("cl")
        w.lines.append(f'{cl} = sched.cache_write {s.ssa} "local"')
        w.axes(s, [("i", m, "spatial"), ("j", n, "spatial")])
        w.random_loops(s, allow_vectorize=False)
        from schedule_gen import StageGen

        cs = StageGen(cl)
        attach = rng.choice(s.leaves)
        w.lines.append(f"sched.compute_at {cl}, {attach.ssa}")
        w.axes(cs, [("i", m, "spatial"), ("j", n, "spatial"), ("k", k, "reduce")])
        w.random_loops(cs)
    else:
        w.axes(s, [("i", m, "spatial"), ("j", n, "spatial"), ("k", k, "reduce")])
        w.random_loops(s)
    text = matmul_text(m, n, k, w.text())
    a, b = rand(m, k, seed=seed % 97), rand(k, n, seed=seed % 89 + 1)
    (c,) = check(text, [a, b], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_lowered_functions_have_no_te_left():
    module = lower_to_loops(parse_text(matmul_text(4, 4, 4)))
    assert not any(True for f in module.body.block.ops for _ in compute_ops(f))


# --- integer semantics through the whole pipeline (te API -> LLVM) ----------------


def test_floor_index_arithmetic_compiled_matches_python():
    """`%` and `//` on indices are floor ops at every level: frontend, bound
    inference, index simplification, LLVM and the reference agree with Python."""
    import tilecraft as tc
    from tilecraft import te

    A = te.placeholder((8,), "float32", name="A")
    B = te.compute((12,), lambda i: A[(i - 5) % 8] + A[(i - 4) // 2 + 2] * 10, name="B")
    C = te.compute((12,), lambda i: B[(i + 3) % 12] - B[11 - i], name="C")
    for split in (None, 4, 5):
        s = te.create_schedule(C)
        if split:
            o, n = s[C].split(C.op.axis[0], factor=split)
            s[B].compute_at(s[C], o)
        f = tc.build(s, [A, C])
        a = np.arange(8, dtype=np.float32) + 1
        c = np.zeros(12, np.float32)
        f(a, c)
        i = np.arange(12)
        b = a[(i - 5) % 8] + a[(i - 4) // 2 + 2] * 10
        np.testing.assert_array_equal(c, b[(i + 3) % 12] - b[11 - i])


def test_truncated_index_arithmetic_reads_what_c_would():
    import tilecraft as tc
    from tilecraft import te
    from tilecraft.frontends.te.expr import truncdiv, truncmod

    A = te.placeholder((4,), "float32", name="A")
    C = te.compute((1,), lambda i: A[truncmod(i - 1, 4) + 1], name="C")  # -1 + 1
    D = te.compute((4,), lambda i: A[truncdiv(i - 3, 2) + 1], name="D")  # -1, -1, 0, 0 (+1)
    f = tc.build(te.create_schedule([C, D]), [A, C, D])
    a = np.array([10, 20, 30, 40], np.float32)
    c, d = np.zeros(1, np.float32), np.zeros(4, np.float32)
    f(a, c, d)
    np.testing.assert_array_equal(c, [10])
    np.testing.assert_array_equal(d, [10, 10, 20, 20])


def test_out_of_bounds_read_is_a_diagnostic_at_the_read():
    import tilecraft as tc
    from tilecraft import te
    from tilecraft.utils.diagnostics import OpError

    A = te.placeholder((4,), "float32", name="A")
    cases = [
        (lambda i: A[(i - 1) % 4 + 1], (1,), "takes values from 4 to 4"),  # floor: 3 + 1
        (lambda i: A[i + 1], (4,), "takes values from 1 to 4"),
        (lambda i: A[i + 9], (1,), "takes values from 9 to 9"),
    ]
    for body, shape, words in cases:
        C = te.compute(shape, body, name="C")
        with pytest.raises(OpError, match=f"te.read of 'A' is out of bounds: index 0 {words}"):
            tc.build(te.create_schedule(C), [A, C])
    # Padding through if_then_else stays legal.
    C = te.compute((6,), lambda i: te.if_then_else((i >= 1) & (i < 5), A[i - 1], 0.0), name="C")
    f = tc.build(te.create_schedule(C), [A, C])
    c = np.zeros(6, np.float32)
    f(np.arange(1, 5, dtype=np.float32), c)
    np.testing.assert_array_equal(c, [0, 1, 2, 3, 4, 0])


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
def test_integer_division_by_zero_is_zero_not_sigfpe(dtype):
    import tilecraft as tc
    from tilecraft import te

    n = 64
    A = te.placeholder((n,), dtype, name="A")
    B = te.placeholder((n,), dtype, name="B")
    Q = te.compute((n,), lambda i: A[i] // B[i], name="Q")
    R = te.compute((n,), lambda i: A[i] % B[i], name="R")
    s = te.create_schedule([Q, R])
    s[Q].vectorize(s[Q].split(Q.op.axis[0], factor=16)[1])
    f = tc.build(s, [A, B, Q, R])
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)
    b = rng.integers(-2, 3, n).astype(dtype)
    a[:4], b[:4] = [info.min, 5, -5, info.min], [-1, 0, 0, 0]
    q, r = np.zeros(n, dtype), np.zeros(n, dtype)
    f(a, b, q, r)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(q, a // b)
        np.testing.assert_array_equal(r, a % b)


@pytest.mark.parametrize("after", ["split", "split_twice", "fuse", "tile"])
def test_primitives_on_the_attach_axis_after_compute_at(after):
    """compute_at(s[C], io) and then io split or fused: the producer follows the
    loop that replaces io (the split's outer part, the fused loop)."""
    import tilecraft as tc
    from tilecraft import te

    A = te.placeholder((12, 10), "float32", name="A")
    B = te.compute((12, 10), lambda i, j: A[i, j] * 2, name="B")
    C = te.compute((12, 10), lambda i, j: B[i, j] + B[i, (j + 1) % 10], name="C")
    s = te.create_schedule(C)
    io, ii = s[C].split(C.op.axis[0], factor=4)
    s[B].compute_at(s[C], io)
    if after == "split":
        s[C].split(io, factor=2)
    elif after == "split_twice":
        o, _ = s[C].split(io, nparts=2)
        s[C].split(o, factor=1)
    elif after == "fuse":
        s[C].fuse(io, ii)
    else:
        s[C].tile(io, ii, 2, 3)
    f = tc.build(s, [A, C])
    a = np.random.default_rng(0).standard_normal((12, 10)).astype(np.float32)
    c = np.zeros((12, 10), np.float32)
    f(a, c)
    np.testing.assert_allclose(c, 2 * a + 2 * np.roll(a, -1, axis=1), rtol=1e-6)


@pytest.mark.parametrize("seed", range(40))
def test_random_pipelines_under_random_schedules(seed):
    """Random 4-stage te programs (negative and offset `//`/`%` index arithmetic,
    padding through if_then_else, a windowed reduction) under random legal
    schedules (compute_at, compute_inline, cache_write, split/fuse/reorder of the
    attach loops afterwards, vectorize/parallel/unroll): the compiled result
    equals the reference evaluation of the unscheduled te program."""
    import tilecraft as tc
    from schedule_gen import pipeline, random_pipeline_schedule
    from tilecraft import te
    from tilecraft.backends.reference import evaluate_module

    rng = random.Random(seed)
    m, n = rng.randint(1, 9), rng.randint(1, 13)
    A, B, C, D = pipeline(rng, m, n)
    s = random_pipeline_schedule(rng, A, B, C, D)
    a = rand(m, n, seed=seed)
    (expected,) = evaluate_module(te.build_module(None, [A, D]), "main", [a])
    got = np.zeros((m, n), np.float32)
    program = str(te.build_module(s, [A, D]))  # what failed, if something does
    try:
        tc.build(s, [A, D])(a, got)
    except Exception as e:
        raise AssertionError(f"seed {seed}:\n{program}") from e
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, err_msg=f"seed {seed}:\n{program}")


@pytest.mark.parametrize(
    "shape, leaves",
    [
        ((1, 8, 14, 14), [112, 14]),  # 14 x 14 = 196 is no multiple of 16: W alone
        ((1, 8, 7, 7), [56, 7]),
        ((1, 8, 4, 4), [8, 16]),  # 4 x 4 fills a vector
        ((1, 8, 1, 1), [8]),  # unit axes fuse on
    ],
)
def test_injective_schedule_vectorizes_w_alone_when_fusing_leaves_a_tail(shape, leaves):
    """schedule_injective fuses trailing axes up to a vector only where the fused
    extent is a multiple of one (or at most one): a fused 14 x 14 would pay a
    div/mod per lane and a guarded tail. The compiled result matches numpy."""
    import tilecraft as tc

    from tilecraft.frontends import te
    from tilecraft.topi.schedule import default_schedule

    x = te.placeholder(shape, name="x")
    t = te.compute(shape, lambda n, c, h, w: x[n, c, h, w] * 2.0 + 1.0, name="t")
    s = default_schedule([t])
    assert [a.dom[1] - a.dom[0] for a in s[t].leaf_iter_vars] == leaves
    assert "vectorized" in str(tc.lower(s, [x, t]))

    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = np.zeros(shape, np.float32)
    tc.build(s, [x, t])(data, out)
    np.testing.assert_array_equal(out, data * 2 + 1)


@pytest.mark.parametrize(
    "shape, leaves",
    [
        ((1, 8, 14, 14), [8, 14, 14]),  # W, whose lanes read along H, unrolled
        ((1, 8, 7, 7), [8, 7, 7]),
        ((1, 8, 4, 4), [8, 16]),  # H and W fused into one vector: gathers stay
    ],
)
def test_injective_schedule_unrolls_lanes_that_would_gather(shape, leaves):
    """A last axis that one vector holds whole but whose lanes read elements that
    are not consecutive (a transpose of the last two axes) is unrolled inside the
    loop over the axis before it instead of vectorized with gathers. The compiled
    model (transpose and relu fused) matches numpy."""
    import tilecraft as tc
    from onnx import TensorProto, helper

    from tilecraft.frontends import te
    from tilecraft.topi import transform
    from tilecraft.topi.schedule import default_schedule

    x = te.placeholder(shape, name="x")
    t = transform.transpose(x, [0, 1, 3, 2])
    s = default_schedule([t])
    assert [a.dom[1] - a.dom[0] for a in s[t].leaf_iter_vars] == leaves
    lowered = str(tc.lower(s, [x, t]))
    assert ("unrolled" in lowered) == (len(leaves) == 3)

    g = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["y"], perm=[0, 1, 3, 2]), helper.make_node("Relu", ["y"], ["z"])],
        "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [shape[0], shape[1], shape[3], shape[2]])],
    )  # fmt: skip
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(tc.compile(m)(data), np.maximum(data.transpose(0, 1, 3, 2), 0))


@pytest.mark.parametrize(
    "shape, perm, leaves",
    [
        ((128, 12, 64), (1, 2, 0), [12 * 8, 64, 16]),  # BERT's key transpose: (heads, tiles), d, lanes
        ((2, 3, 48, 32), (0, 1, 3, 2), [2 * 3 * 3, 32, 16]),
        ((1, 64, 9, 9), (0, 2, 3, 1), [9 * 4, 9, 16]),  # NCHW -> NHWC: channels read 81 apart
    ],
)
def test_injective_schedule_tiles_a_long_axis_whose_lanes_would_gather(shape, perm, leaves):
    """A last axis longer than a vector (a multiple of one) whose lanes would gather
    is cut in one-vector tiles, unrolled inside the loop over the axis before it,
    along which the reads are consecutive: no gather is left. Matches numpy."""
    import tilecraft as tc

    from tilecraft.frontends import te
    from tilecraft.topi import transform
    from tilecraft.topi.schedule import default_schedule

    x = te.placeholder(shape, name="x")
    t = transform.transpose(x, list(perm))
    s = default_schedule([t])
    assert [a.dom[1] - a.dom[0] for a in s[t].leaf_iter_vars] == leaves
    lowered = str(tc.lower(s, [x, t]))
    assert "unrolled" in lowered and "gather" not in lowered
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = np.zeros(t.shape, np.float32)
    tc.build(s, [x, t])(data, out)
    np.testing.assert_array_equal(out, data.transpose(perm))


def _blocked_shuffle(half: int, blocks: int, hw: int, groups: int = 2):
    """What ShuffleNet-v2's fused shuffle kernel computes: a blocked branch cropped
    to `half` channels, concatenated after an NCHW one, shuffled in `groups` and
    padded back to whole blocks of 16 (topi's computes, inlined by the schedule)."""
    from tilecraft.frontends import te
    from tilecraft.topi import transform

    blocked = te.placeholder((1, blocks, hw, hw, 16), name="blocked")
    plain = te.placeholder((1, half, hw, hw), name="plain")
    cropped = transform.strided_slice(
        transform.layout_transform(blocked, "NCHW16c", "NCHW"), [(0, 1, 1), (0, half, 1), (0, hw, 1), (0, hw, 1)]
    )
    channels = 2 * half
    cat = transform.concat([plain, cropped], 1)
    grouped = transform.reshape(cat, (1, groups, channels // groups, hw, hw))
    shuffled = transform.reshape(transform.transpose(grouped, (0, 2, 1, 3, 4)), (1, channels, hw, hw))
    padded = transform.pad(shuffled, [0, 0, 0, 0, 0, -channels % 16, 0, 0])
    return blocked, plain, transform.layout_transform(padded, "NCHW", "NCHW16c")


@pytest.mark.parametrize("half, groups", [(58, 2), (24, 3), (64, 4)])
def test_blocked_channel_shuffle_unrolls_its_lanes(half, groups):
    """The lanes of a channel shuffle into a blocked layout read channels of other
    blocks (gathers): `lanes_gather` says so, and the default schedule unrolls
    them. A copy between blocked layouts does not gather. Both match numpy."""
    import tilecraft as tc

    from tilecraft.frontends import te
    from tilecraft.topi.schedule import default_schedule, inline_injective, lanes_gather, stages

    hw, blocks = 5, -(-half // 16)
    blocked, plain, out = _blocked_shuffle(half, blocks, hw, groups)
    s = te.create_schedule(out)
    inline_injective(s, stages([out]), [out])
    assert lanes_gather(s, out)
    s = default_schedule([out])
    lowered = str(tc.lower(s, [blocked, plain, out]))
    assert "unrolled" in lowered and "vectorized" not in lowered

    rng = np.random.default_rng(groups)
    b = rng.standard_normal((1, blocks, hw, hw, 16)).astype(np.float32)
    p = rng.standard_normal((1, half, hw, hw)).astype(np.float32)
    got = np.zeros(out.shape, np.float32)
    tc.build(s, [blocked, plain, out])(b, p, got)
    nchw = np.concatenate([p, b.transpose(0, 1, 4, 2, 3).reshape(1, blocks * 16, hw, hw)[:, :half]], 1)
    c = 2 * half
    shuffled = nchw.reshape(1, groups, c // groups, hw, hw).transpose(0, 2, 1, 3, 4).reshape(1, c, hw, hw)
    padded = np.concatenate([shuffled, np.zeros((1, -c % 16, hw, hw), np.float32)], 1)
    expected = padded.reshape(1, -(-c // 16), 16, hw, hw).transpose(0, 1, 3, 4, 2)
    np.testing.assert_array_equal(got, expected)

    copy = te.compute(blocked.shape, lambda *i: blocked[i] + 1.0, name="copy")
    s = te.create_schedule(copy)
    assert not lanes_gather(s, copy)
    assert "vectorized" in str(tc.lower(default_schedule([copy]), [blocked, copy]))
