"""The Python te API: IR it generates, schedules it records, errors it raises.

Numbers come from the reference evaluator here (its own tests check it against
numpy); end-to-end tests go through `tilecraft.build`.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tilecraft as tc
from tilecraft import te
from tilecraft.backends.reference import evaluate_module
from tilecraft.driver.context import parse_text
from tilecraft.dialects import sched as sched_ir
from tilecraft.dialects import te as te_ir
from tilecraft.utils.diagnostics import OpError, verify_module


def matmul(M=64, K=32, N=48, dtype="float32"):
    A = te.placeholder((M, K), dtype, name="A")
    B = te.placeholder((K, N), dtype, name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def sched_ops(module) -> list:
    schedule = next(op for op in module.walk() if isinstance(op, sched_ir.ScheduleOp))
    return list(schedule.body.block.ops)


def sched_text(module) -> str:
    schedule = next(op for op in module.walk() if isinstance(op, sched_ir.ScheduleOp))
    return str(schedule)


def round_trips(module) -> bool:
    text = str(module)
    return str(parse_text(text)) == text


# --- IR generation ---------------------------------------------------------------------


def test_matmul_ir():
    A, B, C = matmul()
    module = te.build_module(te.create_schedule(C), [A, B, C], name="mm")
    text = str(module)
    assert 'func.func @mm(%A: tensor<64x32xf32> {tc.name = "A"}, %B: tensor<32x48xf32> {tc.name = "B"}) -> tensor<64x48xf32>' in text
    (compute,) = te_ir.compute_ops(module)
    assert compute.tensor_name.data == "C"
    assert compute.names == ["i", "j"]
    assert compute.reduce is not None
    assert compute.reduce.kind.data == "sum"
    assert compute.reduce.names == ["k"] and compute.reduce.bounds == [(0, 32)]
    assert "te.read %A[%i, %k] : tensor<64x32xf32>" in text
    assert "te.read %B[%k, %j] : tensor<32x48xf32>" in text
    assert "arith.mulf" in text
    assert "func.return %C : tensor<64x48xf32>" in text
    assert "sched.schedule" not in text  # nothing scheduled, nothing emitted
    assert round_trips(module)


def test_tensor_attributes():
    A, B, C = matmul()
    assert C.shape == (64, 48) and C.dtype == "float32" and C.name == "C" and C.ndim == 2
    assert [a.name for a in C.op.axis] == ["i", "j"]
    assert [a.name for a in C.op.reduce_axis] == ["k"]
    assert C.op.reduce_axis[0].dom == (0, 32)
    assert C.op.input_tensors == [A, B]
    assert A.op.input_tensors == () and A.ndim == 2


def test_elementwise_ops_and_index_values():
    X = te.placeholder((8, 4), "float32", name="X")
    Y = te.compute(
        (8, 4),
        lambda i, j: te.exp(X[i, j]) + te.log(X[i, j]) * te.sqrt(X[i, j]) - te.tanh(X[i, j])
        + te.erf(X[i, j]) + te.abs(X[i, j]) + te.maximum(X[i, j], 0.5) / te.minimum(X[i, j], 2)
        + te.sigmoid(X[i, j]) + i * j,
        name="Y",
    )
    text = str(te.build_module(None, [X, Y]))
    for op in ("math.exp", "math.log", "math.sqrt", "math.tanh", "math.erf", "math.absf",
               "arith.maximumf", "arith.minimumf", "arith.divf", "arith.negf"):
        assert op in text, op
    # i * j is index arithmetic, converted once to a float.
    assert "arith.muli %i, %j : index" in text
    assert "arith.index_cast" in text and "arith.sitofp" in text


def test_index_arithmetic_ops():
    X = te.placeholder((16,), "int32", name="X")
    Y = te.compute((8,), lambda i: X[(i * 2 + 1) // 2 % 8 - 0], name="Y")
    text = str(te.build_module(None, [X, Y]))
    for op in ("arith.muli", "arith.addi", "arith.floordivsi", "te.floormod", "arith.subi"):
        assert f"{op} " in text and ": index" in text


def test_python_numbers_take_the_expression_dtype():
    X = te.placeholder((4,), "float64", name="X")
    Y = te.compute((4,), lambda i: X[i] * 2 + 1.5, name="Y")
    assert Y.dtype == "float64"
    text = str(te.build_module(None, [X, Y]))
    assert "arith.constant 2.000000e+00 : f64" in text
    I8 = te.placeholder((4,), "int8", name="I")
    Z = te.compute((4,), lambda i: I8[i] + 3, name="Z")
    assert Z.dtype == "int8"


def test_promotion_where_unambiguous():
    a32 = te.placeholder((4,), "float32", name="a")
    a64 = te.placeholder((4,), "float64", name="b")
    i8 = te.placeholder((4,), "int8", name="c")
    i32 = te.placeholder((4,), "int32", name="d")
    F = te.compute((4,), lambda i: a32[i] + a64[i], name="F")
    G = te.compute((4,), lambda i: i8[i] * i32[i], name="G")
    H = te.compute((4,), lambda i: i32[i] + i, name="H")  # the index becomes an int32
    assert (F.dtype, G.dtype, H.dtype) == ("float64", "int32", "int32")
    text = str(te.build_module(None, [a32, a64, i8, i32, F, G, H]))
    assert "arith.extf" in text and "arith.extsi" in text
    assert "arith.index_cast %i_2 : index to i32" in text


def test_casts():
    X = te.placeholder((4,), "float32", name="X")
    B = te.compute((4,), lambda i: X[i] > 0.0, name="B")
    Y = te.compute(
        (4,),
        lambda i: X[i].astype("int32").astype("int8").astype("int64").astype("float64")
        + B[i].astype("float64") + te.cast(i, "float64"),
        name="Y",
    )
    assert B.dtype == "bool" and Y.dtype == "float64"
    text = str(te.build_module(None, [X, Y]))
    for op in ("arith.fptosi", "arith.trunci", "arith.extsi", "arith.sitofp", "arith.select",
               "arith.cmpf ogt"):
        assert op in text, op
    assert te.const(3).dtype == "int32" and te.const(3.0).dtype == "float32"
    assert te.const(3, "float64").dtype == "float64"


def test_comparisons_and_logic():
    X = te.placeholder((6,), "int32", name="X")
    Y = te.compute(
        (6,),
        lambda i: te.if_then_else(((X[i] < 2) | (X[i] >= 4)) & (X[i] != 5) & (i == i), 1, 0),
        name="Y",
    )
    text = str(te.build_module(None, [X, Y]))
    for p in ("slt", "sge", "ne", "eq"):
        assert f"arith.cmpi {p}" in text
    assert "arith.ori" in text and "arith.andi" in text


def test_padding_emits_lazy_scf_if():
    X = te.placeholder((4, 4), "float32", name="X")
    P = te.compute(
        (6, 6),
        lambda i, j: te.if_then_else(
            te.all(i >= 1, i < 5, j >= 1, j < 5), X[i - 1, j - 1], 0.0
        ),
        name="P",
    )
    module = te.build_module(None, [X, P])
    (compute,) = te_ir.compute_ops(module)
    ifs = [op for op in compute.walk() if op.name == "scf.if"]
    assert len(ifs) == 1 and len(ifs[0].results) == 1
    # The read lives in the then-branch only.
    reads = [op for op in ifs[0].true_region.walk() if isinstance(op, te_ir.ReadOp)]
    assert len(reads) == 1
    assert not any(isinstance(op, te_ir.ReadOp) for op in ifs[0].false_region.walk())
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    (p,) = evaluate_module(module, "main", [x])
    np.testing.assert_array_equal(p, np.pad(x, 1))


def test_multi_stage_order_and_reachability():
    X = te.placeholder((8,), "float32", name="X")
    unused = te.compute((8,), lambda i: X[i] * 3.0, name="unused")
    A = te.compute((8,), lambda i: X[i] + 1.0, name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((8,), lambda i: A[i] + B[i], name="C")
    module = te.build_module(None, [X, C, B])
    names = [c.tensor_name.data for c in te_ir.compute_ops(module)]
    assert names == ["A", "B", "C"]  # producers first; `unused` is not reachable
    assert "func.return %C, %B" in str(module)
    x = np.arange(8, dtype=np.float32)
    c, b = evaluate_module(module, "main", [x])
    np.testing.assert_allclose(b, (x + 1) * 2)
    np.testing.assert_allclose(c, (x + 1) * 3)
    assert unused.name == "unused"


def test_names_unique_and_lambda_names():
    X = te.placeholder((4, 4), "float32", name="X")
    i_red = te.reduce_axis((0, 4), name="i")
    # The reduce axis clashes with the spatial axis `i`: it is renamed in the IR.
    S = te.compute((4,), lambda i: te.sum(X[i, i_red], axis=i_red))
    T = te.compute((4, 4), lambda *idx: X[idx] * 2.0)
    module = te.build_module(None, [X, S, T])
    s_op, t_op = te_ir.compute_ops(module)
    assert s_op.names == ["i"] and s_op.reduce.names == ["i_1"]
    assert t_op.names == ["idx0", "idx1"]
    # Both computes have TVM's default name; the function names them apart.
    assert [s_op.tensor_name.data, t_op.tensor_name.data] == ["compute", "compute_1"]


def test_reduction_kinds_and_where():
    X = te.placeholder((4, 6), "float32", name="X")
    k = te.reduce_axis((0, 6), name="k")
    l_ = te.reduce_axis((1, 3), name="l")
    mx = te.compute((4,), lambda i: te.max(X[i, k], axis=k), name="mx")
    mn = te.compute((4,), lambda i: te.min(X[i, k], axis=[k]), name="mn")
    two = te.compute((1,), lambda z: te.sum(X[l_, k], axis=[l_, k]), name="two")
    pos = te.compute((4,), lambda i: te.sum(X[i, k], axis=k, where=X[i, k] > 0.0), name="pos")
    module = te.build_module(None, [X, mx, mn, two, pos])
    kinds = [c.reduce.kind.data for c in te_ir.compute_ops(module)]
    assert kinds == ["max", "min", "sum", "sum"]
    assert te_ir.compute_ops(module)[2].reduce.bounds == [(1, 3), (0, 6)]
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    r_mx, r_mn, r_two, r_pos = evaluate_module(module, "main", [x])
    np.testing.assert_array_equal(r_mx, x.max(1))
    np.testing.assert_array_equal(r_mn, x.min(1))
    np.testing.assert_allclose(r_two, [x[1:3].sum()], rtol=1e-6)
    np.testing.assert_allclose(r_pos, np.where(x > 0, x, 0).sum(1), rtol=1e-6)


# --- schedules -------------------------------------------------------------------------


def test_split_and_annotations():
    A, B, C = matmul()
    s = te.create_schedule(C)
    i, j = C.op.axis
    (k,) = C.op.reduce_axis
    io, ii = s[C].split(i, factor=16)
    jo, ji = s[C].split(j, nparts=3)
    s[C].reorder(io, jo, k, ii, ji)
    s[C].vectorize(ji)
    s[C].parallel(io)
    s[C].unroll(ii)
    module = te.build_module(s, [A, B, C])
    names = [op.name for op in sched_ops(module)]
    assert names == [
        "sched.stage", "sched.axis", "sched.split", "sched.axis", "sched.split",
        "sched.axis", "sched.reorder", "sched.vectorize", "sched.parallel", "sched.unroll",
    ]  # fmt: skip
    text = sched_text(module)
    assert "= sched.split %i by 16" in text and "= sched.split %j into 3" in text
    assert 'sched.axis %s_C "k"' in text
    assert "sched.reorder %i.outer, %j.outer, %k, %i.inner, %j.inner" in text
    assert [a.name for a in s[C].leaf_iter_vars] == ["i.outer", "j.outer", "k", "i.inner", "j.inner"]
    verify_module(module)
    assert round_trips(module)


def test_tile_fuse():
    A, B, C = matmul()
    s = te.create_schedule(C)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 32, 16)
    assert [a.name for a in s[C].leaf_iter_vars] == ["i.outer", "j.outer", "i.inner", "j.inner", "k"]
    f = s[C].fuse(xo, yo)
    assert f.name == "i.outer.j.outer.fused" and f.extent == 2 * 3
    s[C].parallel(f)
    module = te.build_module(s, [A, B, C])
    text = sched_text(module)
    assert "%i.outer, %j.outer, %i.inner, %j.inner = sched.tile %i, %j by 32, 16" in text
    assert "%i.outer.j.outer.fused = sched.fuse %i.outer, %j.outer" in text
    assert "sched.parallel %i.outer.j.outer.fused" in text


def test_handles_are_emitted_once_on_first_use():
    A, B, C = matmul()
    s = te.create_schedule(C)
    i, j = C.op.axis
    jo, ji = s[C].split(j, factor=4)
    s[C].reorder(i, jo, ji)  # a new axis handle, the same stage handle
    s[C].parallel(i)  # i's handle again
    ops = sched_ops(te.build_module(s, [A, B, C]))
    assert [op.name for op in ops].count("sched.stage") == 1
    assert [op.name for op in ops].count("sched.axis") == 2


def test_compute_at_and_inline():
    X = te.placeholder((64,), "float32", name="X")
    A = te.compute((64,), lambda i: X[i] + 1.0, name="A")
    B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((64,), lambda i: B[i] - 1.0, name="C")
    s = te.create_schedule(C)
    s[A].compute_inline()
    o, n = s[C].split(C.op.axis[0], factor=8)
    s[B].compute_at(s[C], o)
    module = te.build_module(s, [X, C])
    text = sched_text(module)
    assert "sched.compute_inline %s_A" in text
    assert "sched.compute_at %s_B, %i.outer" in text
    x = np.arange(64, dtype=np.float32)
    (c,) = evaluate_module(module, "main", [x])  # the schedule does not change the value
    np.testing.assert_allclose(c, (x + 1) * 2 - 1)


def test_cache_read():
    A, B, C = matmul()
    s = te.create_schedule(C)
    AA = s.cache_read(A, "shared", [C])
    assert AA.name == "A.shared" and AA.shape == A.shape and AA.dtype == A.dtype
    assert [a.name for a in AA.op.axis] == ["ax0", "ax1"]
    io, ii = s[C].split(C.op.axis[0], factor=8)
    s[AA].compute_at(s[C], io)
    s[AA].vectorize(AA.op.axis[1])
    module = te.build_module(s, [A, B, C])
    text = sched_text(module)
    assert '%s_A.shared = sched.cache_read %s_A shared for %s_C' in text
    assert 'sched.axis %s_A.shared "ax1"' in text
    assert "sched.compute_at %s_A.shared, %i.outer" in text
    assert round_trips(module)


def test_cache_read_of_a_compute_names_axes_like_it():
    X = te.placeholder((8, 8), "float32", name="X")
    P = te.compute((8, 8), lambda r, c: X[r, c] * 2.0, name="P")
    Q = te.compute((8, 8), lambda i, j: P[j, i] + 1.0, name="Q")
    s = te.create_schedule(Q)
    PL = s.cache_read(P, "local", Q)
    assert [a.name for a in PL.op.axis] == ["r", "c"]
    s[PL].unroll(PL.op.axis[0])
    verify_module(te.build_module(s, [X, Q]))


def test_cache_write_keeps_the_compute_axes():
    """As in TVM: after cache_write, C.op.axis still names the copy stage's loops;
    the cache stage has fresh axes and takes the reduce axes."""
    A, B, C = matmul()
    s = te.create_schedule(C)
    old_i, old_k = C.op.axis[0], C.op.reduce_axis[0]
    CL = s.cache_write(C, "local")
    assert CL.name == "C.local"
    assert [a.name for a in CL.op.axis] == ["i", "j"]
    assert [a.name for a in CL.op.reduce_axis] == ["k"]
    assert list(s[C].op.axis) == list(C.op.axis) and s[C].op.reduce_axis == ()
    assert all(a is not old_i for a in CL.op.axis)
    with pytest.raises(ValueError, match=r"moved to the cache stage with cache_write; use s\[C\.local\]"):
        s[C].split(old_k, factor=8)
    io, ii = s[C].split(old_i, factor=8)
    s[CL].compute_at(s[C], io)
    s[CL].reorder(CL.op.reduce_axis[0], CL.op.axis[0], CL.op.axis[1])
    module = te.build_module(s, [A, B, C])
    text = sched_text(module)
    assert '%s_C.local = sched.cache_write %s_C local' in text
    assert 'sched.axis %s_C.local "k"' in text
    # The copy stage's axis is taken after the cache_write, on the original handle.
    lines = text.splitlines()
    cw = next(n for n, ln in enumerate(lines) if "sched.cache_write" in ln)
    ax = next(n for n, ln in enumerate(lines) if 'sched.axis %s_C "i"' in ln)
    assert ax > cw


def test_schedule_is_reusable():
    A, B, C = matmul()
    s = te.create_schedule([C])
    s[C].split(C.op.axis[0], factor=8)
    assert str(te.build_module(s, [A, B, C])) == str(te.build_module(s, [A, B, C]))


def test_schedule_error_points_at_the_user_line():
    A, B, C = matmul()
    s = te.create_schedule(C)
    s[C].vectorize(C.op.reduce_axis[0])  # the replay rejects vectorizing a reduce axis
    with pytest.raises(OpError) as info:
        te.build_module(s, [A, B, C])
    assert f"{__file__}:" in str(info.value)


# --- errors ----------------------------------------------------------------------------


def test_wrong_index_count():
    A = te.placeholder((4, 4), "float32", name="A")
    with pytest.raises(ValueError, match="tensor A has rank 2 but is indexed with 1 indices"):
        te.compute((4,), lambda i: A[i])
    with pytest.raises(ValueError, match="rank 2 but is indexed with 3"):
        te.compute((4,), lambda i: A[i, i, i])


def test_bad_dtype_mixing():
    F = te.placeholder((4,), "float32", name="F")
    I = te.placeholder((4,), "int32", name="I")
    with pytest.raises(ValueError, match=r"cannot add float32 and int32.*astype"):
        te.compute((4,), lambda i: F[i] + I[i])
    with pytest.raises(ValueError, match="Python float 0.5 with a int32 expression is ambiguous"):
        te.compute((4,), lambda i: I[i] * 0.5)
    with pytest.raises(ValueError, match="use '//'"):
        te.compute((4,), lambda i: I[i] / 2)
    with pytest.raises(ValueError, match="needs integer operands"):
        te.compute((4,), lambda i: F[i] // 2.0)
    with pytest.raises(ValueError, match=r"te.exp needs a float operand, not int32"):
        te.compute((4,), lambda i: te.exp(I[i]))
    with pytest.raises(ValueError, match="bool condition"):
        te.compute((4,), lambda i: te.if_then_else(I[i], 1, 0))
    with pytest.raises(ValueError, match="does not fit in int8"):
        te.compute((4,), lambda i: te.placeholder((4,), "int8")[i] + 300)
    with pytest.raises(ValueError, match="unsupported dtype 'complex64'"):
        te.placeholder((4,), "complex64")
    with pytest.raises(ValueError, match="index of F must be an integer expression"):
        te.compute((4,), lambda i: F[F[i]])


def test_expressions_have_no_truth_value():
    F = te.placeholder((4,), "float32", name="F")
    with pytest.raises(TypeError, match="te.if_then_else"):
        te.compute((4,), lambda i: F[i] if F[i] > 0 else 0.0)


def test_reduction_must_be_the_whole_body():
    A = te.placeholder((4, 4), "float32", name="A")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(ValueError, match="a reduction must be the whole body of a te.compute"):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k) * 2.0)
    with pytest.raises(ValueError, match="a reduction must be the whole body"):
        te.compute((4,), lambda i: te.exp(te.sum(A[i, k], axis=k)))
    with pytest.raises(ValueError, match="contains another reduction"):
        k2 = te.reduce_axis((0, 4), name="k2")
        te.compute((1,), lambda z: te.sum(te.sum(A[k2, k], axis=k), axis=k2))
    with pytest.raises(ValueError, match="uses reduce axis 'k' outside a reduction"):
        te.compute((4,), lambda i: A[i, k])
    with pytest.raises(ValueError, match=r"te.max reduces over axes made by te.reduce_axis.*te.maximum\(a, b\)"):
        te.compute((4,), lambda i: te.max(A[i, 0], A[i, 1]))


def test_shape_and_lambda_errors():
    A = te.placeholder((4,), "float32", name="A")
    with pytest.raises(ValueError, match="function of 2 indices"):
        te.compute((4, 4), lambda i: A[i])
    with pytest.raises(ValueError, match=r"shape of positive ints or te.var sizes, not \(4, 0\): dimension 0"):
        te.compute((4, 0), lambda i, j: A[i])
    with pytest.raises(ValueError, match="empty range"):
        te.reduce_axis((3, 3))
    with pytest.raises(ValueError, match="out of bounds"):
        te.compute((4,), lambda i: A[7])


def test_schedule_errors():
    A, B, C = matmul()
    s = te.create_schedule(C)
    i, j = C.op.axis
    io, ii = s[C].split(i, factor=8)
    with pytest.raises(ValueError, match="was already split"):
        s[C].split(i, factor=4)
    with pytest.raises(ValueError, match="fuse needs adjacent axes"):
        s[C].fuse(io, j)
    with pytest.raises(ValueError, match="exactly one of factor= or nparts="):
        s[C].split(j)
    with pytest.raises(ValueError, match="memory scope must be one of"):
        s.cache_read(A, "texture", [C])
    with pytest.raises(ValueError, match="cache_write of C must come before"):
        s.cache_write(C, "local")
    with pytest.raises(ValueError, match="not an axis of stage"):
        s[C].parallel(te.reduce_axis((0, 4)))
    other = te.compute((4,), lambda x: x.astype("float32"), name="other")
    with pytest.raises(ValueError, match="not part of this schedule"):
        s[other]


def test_build_module_errors():
    A, B, C = matmul()
    with pytest.raises(ValueError, match="placeholder B is read by the computation but not listed"):
        te.build_module(None, [A, C])
    with pytest.raises(ValueError, match="at least one computed tensor"):
        te.build_module(None, [A, B])
    with pytest.raises(ValueError, match="appears twice"):
        te.build_module(None, [A, B, C, C])
    # A schedule that names a compute outside the function built.
    D = te.compute((64, 48), lambda i, j: C[i, j] + 1.0, name="D")
    s = te.create_schedule(D)
    s[D].parallel(D.op.axis[0])
    with pytest.raises(ValueError, match="not part of the function"):
        te.build_module(s, [A, B, C])


# --- lowering and building -----------------------------------------------------------


def test_lower_gives_loop_ir():
    A, B, C = matmul()
    s = te.create_schedule(C)
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 32, 16)
    s[C].reorder(io, jo, C.op.reduce_axis[0], ii, ji)
    s[C].vectorize(ji)
    s[C].parallel(io)
    text = tc.lower(s, [A, B, C])
    assert "loop.for" in text and "parallel" in text and "vectorized" in text
    assert "te.compute" not in text and "sched." not in text


def _build_or_skip(s, args):
    """tc.build for the LLVM target (a missing backend is a failure, not a skip)."""
    return tc.build(s, args, target="llvm")


def test_build_matmul_end_to_end():
    A, B, C = matmul(M=67, K=33, N=45)
    s = te.create_schedule(C)
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], 16, 8)
    s[C].reorder(io, jo, C.op.reduce_axis[0], ii, ji)
    s[C].vectorize(ji)
    s[C].parallel(io)
    f = _build_or_skip(s, [A, B, C])
    rng = np.random.default_rng(1)
    a = rng.standard_normal((67, 33)).astype(np.float32)
    b = rng.standard_normal((33, 45)).astype(np.float32)
    c = np.zeros((67, 45), np.float32)
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_build_reorders_interleaved_args():
    X = te.placeholder((16,), "float32", name="X")
    Y = te.compute((16,), lambda i: X[i] * 2.0, name="Y")
    Z = te.placeholder((16,), "float32", name="Z")
    W = te.compute((16,), lambda i: Y[i] + Z[i], name="W")
    s = te.create_schedule(W)
    f = _build_or_skip(s, [X, W, Z])  # an output between two inputs
    x, z = np.arange(16, dtype=np.float32), np.ones(16, np.float32)
    w = np.zeros(16, np.float32)
    f(x, w, z)
    np.testing.assert_allclose(w, x * 2 + z)


def test_build_rejects_unknown_target():
    A, B, C = matmul()
    with pytest.raises(ValueError, match="unknown target"):
        tc.build(te.create_schedule(C), [A, B, C], target="rocm")


# --- built code vs the reference evaluator ---------------------------------------------


def check_built(s, args, inputs, rtol=1e-5, atol=1e-5):
    """Build `args` with schedule `s`, run it, and compare with the reference."""
    f = _build_or_skip(s, args)
    expected = evaluate_module(te.build_module(s, args), "main", inputs)
    outputs = [np.zeros(e.shape, e.dtype) for e in expected]
    arrays, it_in, it_out = [], iter(inputs), iter(outputs)
    for t in args:
        arrays.append(next(it_in) if isinstance(t.op, te.PlaceholderOp) else next(it_out))
    f(*arrays)
    for got, want in zip(outputs, expected):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def softmax(M, N):
    X = te.placeholder((M, N), "float32", name="X")
    k1 = te.reduce_axis((0, N), name="k")
    mx = te.compute((M,), lambda i: te.max(X[i, k1], axis=k1), name="mx")
    e = te.compute((M, N), lambda i, j: te.exp(X[i, j] - mx[i]), name="e")
    k2 = te.reduce_axis((0, N), name="k")
    total = te.compute((M,), lambda i: te.sum(e[i, k2], axis=k2), name="total")
    out = te.compute((M, N), lambda i, j: e[i, j] / total[i], name="out")
    return X, mx, e, total, out


def test_build_softmax_compute_at():
    X, mx, e, total, out = softmax(9, 37)
    s = te.create_schedule(out)
    i, j = out.op.axis
    for stage in (mx, e, total):
        s[stage].compute_at(s[out], i)
    jo, ji = s[out].split(j, factor=8)
    s[out].vectorize(ji)
    s[out].parallel(i)
    x = np.random.default_rng(2).standard_normal((9, 37)).astype(np.float32)
    check_built(s, [X, out], [x])


def test_build_conv2d_with_padding_inlined():
    N, C, H, W, F, K, pad = 1, 3, 10, 9, 4, 3, 1
    X = te.placeholder((N, C, H, W), "float32", name="X")
    Wt = te.placeholder((F, C, K, K), "float32", name="W")
    P = te.compute(
        (N, C, H + 2 * pad, W + 2 * pad),
        lambda n, c, h, w: te.if_then_else(
            te.all(h >= pad, h < H + pad, w >= pad, w < W + pad), X[n, c, h - pad, w - pad], 0.0
        ),
        name="P",
    )
    rc, ry, rx = te.reduce_axis((0, C), "rc"), te.reduce_axis((0, K), "ry"), te.reduce_axis((0, K), "rx")
    Y = te.compute(
        (N, F, H, W),
        lambda n, f, y, x: te.sum(P[n, rc, y + ry, x + rx] * Wt[f, rc, ry, rx], axis=[rc, ry, rx]),
        name="Y",
    )
    s = te.create_schedule(Y)
    s[P].compute_inline()
    n, f, y, x = Y.op.axis
    xo, xi = s[Y].split(x, factor=4)
    s[Y].parallel(f)
    rng = np.random.default_rng(3)
    x_in = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w_in = rng.standard_normal((F, C, K, K)).astype(np.float32)
    check_built(s, [X, Wt, Y], [x_in, w_in])


def test_build_cache_read_and_write():
    A, B, C = matmul(M=40, K=24, N=36)
    s = te.create_schedule(C)
    CL = s.cache_write(C, "local")
    AA = s.cache_read(A, "local", [CL])
    io, jo, ii, ji = s[C].tile(s[C].op.axis[0], s[C].op.axis[1], 8, 8)
    s[CL].compute_at(s[C], jo)
    s[AA].compute_at(s[CL], CL.op.reduce_axis[0])
    rng = np.random.default_rng(4)
    a = rng.standard_normal((40, 24)).astype(np.float32)
    b = rng.standard_normal((24, 36)).astype(np.float32)
    check_built(s, [A, B, C], [a, b], rtol=1e-4, atol=1e-4)


def test_build_integer_program():
    X = te.placeholder((50,), "int8", name="X")
    Y = te.compute(
        (50,),
        lambda i: (X[i].astype("int32") * 3 // 2 % 7 + i)
        + te.if_then_else(X[i] > 0, 1, -1),
        name="Y",
    )
    s = te.create_schedule(Y)
    o, n = s[Y].split(Y.op.axis[0], factor=8)
    s[Y].vectorize(n)
    x = np.random.default_rng(5).integers(-128, 128, 50).astype(np.int8)
    check_built(s, [X, Y], [x])


@settings(max_examples=25, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 20), st.integers(1, 20), st.integers(1, 20)),
    factors=st.tuples(*[st.one_of(st.none(), st.integers(1, 9))] * 3),
    order_seed=st.randoms(use_true_random=False),
    parallel=st.booleans(),
    vectorize=st.booleans(),
)
def test_random_matmul_schedules_compute_the_same(shape, factors, order_seed, parallel, vectorize):
    M, N, K = shape
    A, B, C = matmul(M, K, N)
    s = te.create_schedule(C)
    leaves = []
    for axis, factor in zip((*C.op.axis, *C.op.reduce_axis), factors):
        leaves += list(s[C].split(axis, factor=factor)) if factor else [axis]
    order_seed.shuffle(leaves)
    s[C].reorder(*leaves)
    if parallel and leaves[0].kind == "spatial":
        s[C].parallel(leaves[0])
    if vectorize and leaves[-1].kind == "spatial" and leaves[-1] is not leaves[0]:
        s[C].vectorize(leaves[-1])
    rng = np.random.default_rng(6)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    check_built(s, [A, B, C], [a, b], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("a_name,b_name", [("é-a b", ".out$x"), ("1st", 'my "out"'), ("", "-")])
def test_any_tensor_name_builds_and_prints_parseable_ir(a_name, b_name):
    # Names are the user's: any character becomes a valid SSA hint (utils/names.py),
    # the IR prints and parses back, and the function computes as with plain names.
    A = te.placeholder((4,), name=a_name)
    B = te.compute((4,), lambda i: A[i] * 2, name=b_name)
    s = te.create_schedule(B.op)
    parse_text(str(tc.lower(s, [A, B])))
    a, b = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    tc.build(s, [A, B])(a, b)
    np.testing.assert_array_equal(b, a * 2)
