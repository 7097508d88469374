"""Targets and devices as TVM spells them (target.py, nd.py): `Target("accel")` is
what `tc.build(target="accel")` builds for, and the errors for the targets and
devices tilecraft lacks name the two it has."""

import numpy as np
import pytest

import tilecraft as tvm
from tilecraft import te
from tilecraft.target import Target
from tilecraft.topi.accel_intrin import gemm_intrin


def packed_gemm(mo=2, ko=2, no=2, block=16):
    """R = int8(sum_k A[i, k, 0, :] . W[j, k, :, :]) in VTA's packed layout, on the
    accelerator's buffers (as tests/pytest/test_accel_build.py, one thread)."""
    A = te.placeholder((mo, ko, 1, block), "int8", name="A")
    W = te.placeholder((no, ko, block, block), "int8", name="W")
    k = te.reduce_axis((0, ko), name="k")
    kk = te.reduce_axis((0, block), name="kk")
    C = te.compute(
        (mo, no, 1, block),
        lambda i, j, x, y: te.sum(A[i, k, x, kk].astype("int32") * W[j, k, y, kk].astype("int32"), axis=[k, kk]),
        name="C",
    )
    R = te.compute(C.shape, lambda *i: C(*i).astype("int8"), name="R")
    s = te.create_schedule(R)
    AA = s.cache_read(A, "inp_buffer", [C])
    WW = s.cache_read(W, "wgt_buffer", [C])
    s[C].set_scope("acc_buffer")
    i, j, x, y = s[R].op.axis
    s[C].compute_at(s[R], j)
    ci, cj, cx, cy = s[C].op.axis
    ck, ckk = s[C].op.reduce_axis
    s[C].reorder(ck, ci, cj, cx, cy, ckk)
    s[AA].compute_at(s[C], ck)
    s[WW].compute_at(s[C], ck)
    s[C].tensorize(cx, gemm_intrin())
    return s, [A, W, R]


def test_accel_target_objects():
    t = Target("accel")
    assert (t.kind.name, t.spec, t.serial, str(t.host)) == ("accel", "", False, "llvm")
    t = Target("accel -spec=my_vta.json -force-serial")
    assert (t.kind.name, t.spec, t.serial) == ("accel", "my_vta.json", True)
    assert Target(target="llvm", host="llvm").kind.name == "llvm"
    with pytest.raises(ValueError, match=r"unknown accel target option '-fast' \(-spec=FILE, -force-serial\)"):
        Target("accel -fast")
    with pytest.raises(ValueError, match="tilecraft's host target is 'llvm'"):
        Target("accel", host="accel")


def test_build_takes_the_target_object():
    s, args = packed_gemm()
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, args[0].shape).astype("int8")
    w = rng.integers(-128, 128, args[1].shape).astype("int8")
    by_name, by_object = np.zeros(args[2].shape, "int8"), np.zeros(args[2].shape, "int8")
    f = tvm.build(s, args, target=Target("accel"))
    assert "GEMM" in f.get_source("asm")  # the accelerator's program, not CPU code
    f(a, w, by_object)
    tvm.build(s, args, target="accel")(a, w, by_name)
    acc = np.einsum("ikxl,jkyl->ijxy", a.astype(np.int64), w.astype(np.int64))
    np.testing.assert_array_equal(by_object, acc.astype(np.int32).astype(np.int8))
    np.testing.assert_array_equal(by_object, by_name)


@pytest.mark.parametrize("target", ["rocm", "opencl -device=mali", ""])
def test_unknown_targets_name_the_two(target):
    with pytest.raises(ValueError, match=f"unknown target '{target}': tilecraft compiles for the host CPU "
                                         r"\(target 'llvm'.*and for its tensor accelerator \(target 'accel'"):  # fmt: skip
        Target(target)


def test_gpu_devices_name_the_accelerator_too():
    for name in ("gpu", "cl"):
        with pytest.raises(NotImplementedError, match=f"tvm.{name}: .*its tensor accelerator \\(target 'accel'.*'cuda'"):
            getattr(tvm, name)
    with pytest.raises(ValueError, match="there is no device 'rocm': .*its tensor accelerator"):
        tvm.device("rocm", 0)


def test_cuda_device_and_target_need_no_driver():
    assert repr(tvm.cuda(0)) == "cuda(0)" and tvm.device("cuda", 0) == tvm.cuda(0)
    assert Target("cuda -arch=sm_90").arch == "sm_90" and Target("cuda").arch is None
    with pytest.raises(ValueError, match="unknown cuda target option '-model=x'"):
        Target("cuda -model=x")


def test_the_accelerators_device_holds_host_arrays():
    assert repr(tvm.ext_dev(0)) == "ext_dev(0)" and tvm.device("accel") == tvm.ext_dev(0)
    assert repr(tvm.device("llvm", 0)) == "cpu(0)"
    x = tvm.nd.array(np.arange(4, dtype="float32"), tvm.ext_dev(0))
    np.testing.assert_array_equal(x.numpy(), np.arange(4))
