"""Target "cuda": compiling (here, without a GPU) and running (tests marked `gpu`,
skipped with the reason where there is no driver or device).

Run the GPU tests on a machine with one: `pytest tests/pytest/test_cuda.py -m gpu`.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilecraft as tc
from tilecraft import te
from tilecraft.utils.cuda_driver import CudaError, Driver, device_present
from tilecraft.utils.diagnostics import OpError

NO_DEVICE = device_present()
gpu = pytest.mark.gpu
needs_device = pytest.mark.skipif(NO_DEVICE is not None, reason=f"no CUDA device: {NO_DEVICE}")


def vector_add(n=1000, block=64, dtype="float32"):
    A = te.placeholder((n,), dtype, name="A")
    B = te.placeholder((n,), dtype, name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C)
    bx, tx = s[C].split(C.op.axis[0], factor=block)
    s[C].bind(bx, te.thread_axis("blockIdx.x"))
    s[C].bind(tx, te.thread_axis("threadIdx.x"))
    return s, [A, B, C]


def elementwise_2d(m=100, n=70, tile=(8, 16)):
    A = te.placeholder((m, n), "float32", name="A")
    C = te.compute((m, n), lambda i, j: A[i, j] * 2.0 + 1.0, name="C")
    s = te.create_schedule(C)
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], *tile)
    s[C].bind(io, te.thread_axis("blockIdx.y"))
    s[C].bind(jo, te.thread_axis("blockIdx.x"))
    s[C].bind(ii, te.thread_axis("threadIdx.y"))
    s[C].bind(ji, te.thread_axis("threadIdx.x"))
    return s, [A, C]


def matmul(m=67, n=45, k=33, tile=16):
    A = te.placeholder((m, k), "float32", name="A")
    B = te.placeholder((k, n), "float32", name="B")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    s = te.create_schedule(C)
    io, jo, ii, ji = s[C].tile(C.op.axis[0], C.op.axis[1], tile, tile)
    s[C].bind(io, te.thread_axis("blockIdx.y"))
    s[C].bind(jo, te.thread_axis("blockIdx.x"))
    s[C].bind(ii, te.thread_axis("threadIdx.y"))
    s[C].bind(ji, te.thread_axis("threadIdx.x"))
    return s, [A, B, C]


# -- compiling, no GPU needed ---------------------------------------------------------


def test_vector_add_compiles_to_ptx_without_a_driver():
    s, args = vector_add()
    f = tc.build(s, args, target="cuda -arch=sm_90")
    ptx = f.get_source("ptx")
    assert ".target sm_90" in ptx
    assert ".entry main_kernel0" in ptx
    assert "%tid.x" in ptx and "%ctaid.x" in ptx
    assert "ld.global" in ptx and "st.global" in ptx
    assert f.imported_modules[0].get_source() == ptx
    (launch,) = f.launches
    assert launch.grid == (16, 1, 1) and launch.block == (64, 1, 1)


def test_2d_and_matmul_launch_dimensions():
    s, args = elementwise_2d()
    f = tc.build(s, args, target="cuda -arch=sm_80")
    assert f.launches[0].grid == (5, 13, 1) and f.launches[0].block == (16, 8, 1)
    assert "%ctaid.y" in f.get_source() and "%tid.y" in f.get_source()
    s, args = matmul()
    f = tc.build(s, args, target="cuda -arch=sm_80")
    assert f.launches[0].grid == (3, 5, 1) and f.launches[0].block == (16, 16, 1)
    assert "fma.rn.f32" in f.get_source()  # the reduction, in each thread


def test_bind_round_trips_in_the_schedule_ir():
    s, args = vector_add()
    text = tc.lower(s, args)
    assert "blockIdx.x {" in text and "threadIdx.x {" in text


def test_too_many_threads_per_block_is_an_error_at_the_loop():
    s, args = vector_add(n=4096, block=2048)
    with pytest.raises(OpError, match=r"runs 2048 threads per block \(threadIdx.x 2048\); a block holds at most 1024"):
        tc.build(s, args, target="cuda")


def test_bound_loop_inside_an_unbound_loop_is_an_error():
    A = te.placeholder((64, 64), "float32", name="A")
    C = te.compute((64, 64), lambda i, j: A[i, j] + 1.0, name="C")
    s = te.create_schedule(C)
    s[C].bind(C.op.axis[1], te.thread_axis("threadIdx.x"))
    with pytest.raises(OpError, match="is inside loop '%i', which is not bound"):
        tc.build(s, [A, C], target="cuda")


def test_binding_a_reduce_axis_is_an_error():
    s, (A, B, C) = matmul()
    r = C.op.reduce_axis[0]
    s[C].bind(r, te.thread_axis("threadIdx.z"))
    with pytest.raises(Exception, match="cannot bind reduce axis 'r'"):
        tc.build(s, [A, B, C], target="cuda")


def test_unbound_stage_on_the_host_is_an_error():
    A = te.placeholder((64,), "float32", name="A")
    C = te.compute((64,), lambda i: A[i] + 1.0, name="C")
    s = te.create_schedule(C)
    with pytest.raises(OpError, match="'loop.for' would run on the host between kernels"):
        tc.build(s, [A, C], target="cuda")


def test_cpu_build_of_a_bound_schedule_says_cuda():
    s, args = vector_add()
    with pytest.raises(OpError, match="runs on a GPU: build for target 'cuda'"):
        tc.build(s, args, target="llvm")


def test_bad_thread_tag_and_arch():
    with pytest.raises(tc.compat.UnsupportedError, match="unknown thread tag 'warpIdx.x'"):
        te.thread_axis("warpIdx.x")
    with pytest.raises(ValueError, match="not an NVIDIA architecture"):
        tc.target.Target("cuda -arch=gfx90a")


def test_no_driver_is_a_clear_error():
    with pytest.raises(CudaError, match="no CUDA driver: libcuda_missing.so.1 not found"):
        Driver("libcuda_missing.so.1")


@pytest.mark.skipif(NO_DEVICE is None, reason="a CUDA device is present")
def test_running_without_a_device_says_why():
    s, args = vector_add()
    f = tc.build(s, args, target="cuda")
    x = np.zeros(1000, "float32")
    with pytest.raises(CudaError):
        f(x, x, x.copy())


# -- running, on a GPU ----------------------------------------------------------------


@gpu
@needs_device
def test_vector_add_extent_not_a_multiple_of_the_block():
    s, args = vector_add(n=1000, block=64)
    f = tc.build(s, args, target="cuda")
    a, b = np.random.rand(1000).astype("float32"), np.random.rand(1000).astype("float32")
    dev = tc.cuda(0)
    A, B, C = tc.nd.array(a, dev), tc.nd.array(b, dev), tc.nd.empty((1000,), "float32", dev)
    f(A, B, C)
    np.testing.assert_allclose(C.numpy(), a + b, rtol=1e-6)


@gpu
@needs_device
def test_host_arrays_are_copied_with_a_warning():
    s, args = vector_add(n=300, block=128)
    f = tc.build(s, args, target="cuda")
    a, b = np.random.rand(300).astype("float32"), np.random.rand(300).astype("float32")
    c = np.zeros(300, "float32")
    with pytest.warns(UserWarning, match="host arrays are copied"):
        f(a, b, c)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


@gpu
@needs_device
def test_2d_elementwise_on_blocks_and_threads():
    s, args = elementwise_2d()
    f = tc.build(s, args, target="cuda")
    a = np.random.rand(100, 70).astype("float32")
    dev = tc.cuda(0)
    A, C = tc.nd.array(a, dev), tc.nd.empty((100, 70), "float32", dev)
    f(A, C)
    np.testing.assert_allclose(C.numpy(), a * 2 + 1, rtol=1e-6)


@gpu
@needs_device
def test_naive_matmul_with_a_reduction_in_each_thread():
    s, args = matmul()
    f = tc.build(s, args, target="cuda")
    a, b = np.random.rand(67, 33).astype("float32"), np.random.rand(33, 45).astype("float32")
    dev = tc.cuda(0)
    A, B, C = tc.nd.array(a, dev), tc.nd.array(b, dev), tc.nd.empty((67, 45), "float32", dev)
    f(A, B, C)
    np.testing.assert_allclose(C.numpy(), a @ b, rtol=1e-5)


@gpu
@needs_device
def test_int32_vector_add():
    s, args = vector_add(n=777, block=256, dtype="int32")
    f = tc.build(s, args, target="cuda")
    a = np.random.randint(-1000, 1000, 777).astype("int32")
    b = np.random.randint(-1000, 1000, 777).astype("int32")
    dev = tc.cuda(0)
    A, B, C = tc.nd.array(a, dev), tc.nd.array(b, dev), tc.nd.empty((777,), "int32", dev)
    f(A, B, C)
    np.testing.assert_array_equal(C.numpy(), a + b)


@gpu
@needs_device
def test_device_arrays_copy_and_expose_the_cuda_array_interface():
    dev = tc.cuda(0)
    x = np.arange(12, dtype="float32").reshape(3, 4)
    A = tc.nd.array(x, dev)
    assert A.shape == (3, 4) and A.dtype == np.float32 and A.device == dev
    B = tc.nd.empty((3, 4), "float32", dev)
    A.copyto(B)
    np.testing.assert_array_equal(B.numpy(), x)
    interface = B.__cuda_array_interface__
    assert interface["shape"] == (3, 4) and interface["typestr"] == "<f4" and interface["data"][0] == B.pointer
    np.testing.assert_array_equal(A.copyto(tc.cpu(0)), x)


@gpu
@needs_device
def test_torch_tensors_pass_in_without_copies():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    s, args = vector_add(n=1000, block=64)
    f = tc.build(s, args, target="cuda")
    a = torch.rand(1000, device="cuda")
    b = torch.rand(1000, device="cuda")
    c = torch.zeros(1000, device="cuda")
    f(a, b, c)
    torch.cuda.synchronize()
    np.testing.assert_allclose(c.cpu().numpy(), (a + b).cpu().numpy(), rtol=1e-6)


@gpu
@needs_device
def test_timing_with_events():
    s, args = vector_add(n=1 << 20, block=256)
    f = tc.build(s, args, target="cuda")
    dev = tc.cuda(0)
    arrays = [tc.nd.array(np.ones(1 << 20, "float32"), dev) for _ in range(3)]
    assert f.time_evaluator(f.entry_name, dev, number=5)(*arrays).mean > 0


def shared_matmul(m, n, k, block=64, thread=4, ktile=8):
    """TVM's GPU GEMM schedule: A and B tiles in shared memory at the reduction's
    outer loop, loaded by the block's threads together; a register tile per thread."""
    A = te.placeholder((m, k), "float32", name="A")
    B = te.placeholder((k, n), "float32", name="B")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    s = te.create_schedule(C)
    AA = s.cache_read(A, "shared", [C])
    BB = s.cache_read(B, "shared", [C])
    CL = s.cache_write(C, "local")
    threads = block // thread
    bi, ti = s[C].split(C.op.axis[0], factor=block)
    bj, tj = s[C].split(C.op.axis[1], factor=block)
    ty, ii = s[C].split(ti, factor=thread)
    tx, jj = s[C].split(tj, factor=thread)
    s[C].reorder(bi, bj, ty, tx, ii, jj)
    s[C].bind(bi, te.thread_axis("blockIdx.y"))
    s[C].bind(bj, te.thread_axis("blockIdx.x"))
    s[C].bind(ty, te.thread_axis("threadIdx.y"))
    s[C].bind(tx, te.thread_axis("threadIdx.x"))
    s[CL].compute_at(s[C], tx)
    ci, cj = s[CL].op.axis
    ko, ki = s[CL].split(s[CL].op.reduce_axis[0], factor=ktile)
    s[CL].reorder(ko, ki, ci, cj)
    for S in (AA, BB):
        s[S].compute_at(s[CL], ko)
        fused = s[S].fuse(*s[S].op.axis)
        _, t = s[S].split(fused, factor=threads * threads)
        y, x = s[S].split(t, factor=threads)
        s[S].bind(y, te.thread_axis("threadIdx.y"))
        s[S].bind(x, te.thread_axis("threadIdx.x"))
    return s, [A, B, C]


def test_shared_matmul_tiles_cover_the_block_and_sync():
    s, args = shared_matmul(128, 128, 64)
    f = tc.build(s, args, target="cuda -arch=sm_90")
    gpu_ir = f.get_source("gpu")
    # one tile per block: what all 16 x 16 threads read at one %r.outer, not one thread's 4 x 8
    assert 'loop.alloc "A.shared" shared : memref<64x8xf32>' in gpu_ir
    assert 'loop.alloc "B.shared" shared : memref<8x64xf32>' in gpu_ir
    assert gpu_ir.count('"gpu.barrier"') == 2  # after the loads, and before the next ones
    ptx = f.get_source("ptx")
    assert ".shared .align 16 .b8" in ptx
    assert "st.shared" in ptx and "ld.shared" in ptx and ptx.count("bar.sync") == 2
    assert f.launches[0].grid == (2, 2, 1) and f.launches[0].block == (16, 16, 1)


def test_shared_stage_not_bound_to_the_threads_is_an_error():
    A = te.placeholder((64,), "float32", name="A")
    C = te.compute((64,), lambda i: A[i] * 2.0, name="C")
    s = te.create_schedule(C)
    AA = s.cache_read(A, "shared", [C])
    bi, ti = s[C].split(C.op.axis[0], factor=16)
    s[C].bind(bi, te.thread_axis("blockIdx.x"))
    s[C].bind(ti, te.thread_axis("threadIdx.x"))
    s[AA].compute_at(s[C], bi)  # its loop stays serial: each thread would write all 16
    with pytest.raises(OpError, match="shared buffer 'A.shared' is written by every thread of the block alike"):
        tc.build(s, [A, C], target="cuda")


def test_shared_memory_beyond_the_block_limit_is_an_error():
    s, args = shared_matmul(512, 512, 512, ktile=128)  # 2 x 64 x 128 x 4 bytes = 64 KiB
    with pytest.raises(OpError, match=r"needs 65536 bytes of shared memory .*a block has at most 49152"):
        tc.build(s, args, target="cuda")


@gpu
@needs_device
@pytest.mark.parametrize("m, n, k", [(256, 192, 128), (100, 90, 37)])
def test_shared_memory_matmul(m, n, k):
    """Sizes the tiles divide, and sizes they do not (the guards)."""
    s, args = shared_matmul(m, n, k)
    f = tc.build(s, args, target="cuda")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k), "float32"), rng.standard_normal((k, n), "float32")
    dev = tc.cuda(0)
    A, B, C = tc.nd.array(a, dev), tc.nd.array(b, dev), tc.nd.empty((m, n), "float32", dev)
    f(A, B, C)
    np.testing.assert_allclose(C.numpy(), a @ b, rtol=1e-4, atol=1e-4)


# -- 16-byte vector accesses ------------------------------------------------------------


def _bench_vector_sgemm():
    """bench/gpu.py's `shared_v4` schedule (tested here so the bench's fastest
    variant is known right before it is timed)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench" / "gpu.py"
    spec = importlib.util.spec_from_file_location("bench_gpu", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.vector_sgemm


def test_vectorized_shared_matmul_loads_16_bytes_at_a_time():
    s, args = _bench_vector_sgemm()(256, 256, 64, block=64, thread=4)
    f = tc.build(s, args, target="cuda -arch=sm_90")
    ptx = f.get_source("ptx")
    assert "ld.global.nc.v4.b32" in ptx  # the slices' loads, 4 floats per thread
    assert "st.shared.v4.b32" in ptx  # B's slice as it is
    assert ptx.count("ld.shared.v4.b32") == 8 * 2  # per r of 8: a row of each slice
    assert "ld.shared.b32" not in ptx  # no scalar reads of the slices left
    assert "st.global.v4.b32" in ptx  # C, 4 floats at a time
    assert ptx.count("bar.sync") == 2


def test_unaligned_vector_access_is_split_not_wrong():
    """`A[4 t + 1 + v]`: the lanes are contiguous but not 16-byte aligned, so no v4."""
    A = te.placeholder((260,), "float32", name="A")
    C = te.compute((256,), lambda i: A[i + 1], name="C")
    s = te.create_schedule(C)
    t, v = s[C].split(C.op.axis[0], factor=4)
    s[C].bind(t, te.thread_axis("threadIdx.x"))
    s[C].vectorize(v)
    ptx = tc.build(s, [A, C], target="cuda -arch=sm_90").get_source("ptx")
    assert "st.global.v4.b32" in ptx and "ld.global.nc.v4" not in ptx


@gpu
@needs_device
@pytest.mark.parametrize(
    "m, n, k, block, thread",
    [(256, 192, 128, 64, 4), (100, 90, 37, 64, 4), (256, 256, 64, 128, 8), (200, 136, 36, 128, 8)],
)
def test_vectorized_shared_matmul(m, n, k, block, thread):
    """Sizes the tiles divide (vector accesses), and sizes they do not (masked ones)."""
    s, args = _bench_vector_sgemm()(m, n, k, block=block, thread=thread)
    f = tc.build(s, args, target="cuda")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k), "float32"), rng.standard_normal((k, n), "float32")
    dev = tc.cuda(0)
    A, B, C = tc.nd.array(a, dev), tc.nd.array(b, dev), tc.nd.empty((m, n), "float32", dev)
    f(A, B, C)
    np.testing.assert_allclose(C.numpy(), a @ b, rtol=1e-4, atol=1e-4)


@gpu
@needs_device
def test_unaligned_device_array_is_refused():
    from tilecraft.utils.cuda_array import CudaArray

    s, args = vector_add(n=256)
    f = tc.build(s, args, target="cuda")
    dev = tc.cuda(0)
    whole = tc.nd.array(np.zeros(257, "float32"), dev)
    view = CudaArray(whole.pointer + 4, (256,), "float32", owner=whole)  # one float in
    b = tc.nd.array(np.zeros(256, "float32"), dev)
    with pytest.raises(ValueError, match="argument A is at address .*not a multiple of 16 bytes"):
        f(view, b, b)
