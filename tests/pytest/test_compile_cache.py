"""The on-disk compile cache (utils/compile_cache.py) and the per-kernel objects
behind it (compiler.compile_model_module): a second compile is a cache hit, a
damaged or foreign entry is rebuilt and never loaded, `TILECRAFT_CACHE_DIR=0`
turns it off, another target misses, and identical kernels are one object.
Hits are counted (`compile_cache.stats`), never timed."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tilecraft.utils import compile_cache
from tilecraft.utils.compile_cache import CompileCache, cache_dir, stats

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(0)
W1 = RNG.standard_normal((8, 3, 3, 3)).astype(np.float32)
W2 = RNG.standard_normal((8, 8, 3, 3)).astype(np.float32)
X = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)


def two_convs(w2: np.ndarray = W2) -> onnx.ModelProto:
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "two_convs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])],
        [numpy_helper.from_array(W1, "w1"), numpy_helper.from_array(w2, "w2")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def conv_relu(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    h, width = x.shape[2:]
    out = np.zeros((1, w.shape[0], h, width), np.float64)
    for dy in range(3):
        for dx in range(3):
            out += np.einsum("oc,nchw->nohw", w[:, :, dy, dx], padded[:, :, dy : dy + h, dx : dx + width])
    return np.maximum(out, 0)


def expected(w2: np.ndarray = W2) -> np.ndarray:
    return conv_relu(conv_relu(X, W1), w2)


def compile_counted(model=None, **kwargs):
    import tilecraft as tc

    stats.clear()
    m = tc.compile(model if model is not None else two_convs(), **kwargs)
    return m, dict(stats)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """A cache holding `two_convs` (compiled once for the module), the model,
    and the counts of that cold compile."""
    directory = tmp_path_factory.mktemp("seeded")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TILECRAFT_CACHE_DIR", str(directory))
        model, counts = compile_counted()
    return directory, model, counts


@pytest.fixture
def cache(seeded, tmp_path, monkeypatch) -> Path:
    """A copy of the seeded cache, in use."""
    directory = tmp_path / "cache"
    shutil.copytree(seeded[0], directory)
    monkeypatch.setenv("TILECRAFT_CACHE_DIR", str(directory))
    return directory


def test_second_compile_hits_and_matches_numpy(seeded, cache):
    _, first, cold = seeded
    assert cold.get(("model", "hit"), 0) == 0 and cold[("model", "write")] == 1
    assert cold[("object", "write")] >= 2  # the kernels and @main
    second, warm = compile_counted()
    assert warm[("model", "hit")] == 1
    assert warm[("object", "hit")] == cold[("object", "write")]
    assert ("object", "write") not in warm and ("model", "write") not in warm
    for m in (first, second):
        np.testing.assert_allclose(m(X), expected(), rtol=1e-4, atol=1e-4)
    assert second.ir == first.ir and second.kernel_calls == first.kernel_calls
    # the loop IR of a cached model is parsed when asked for
    assert second.module is not None and "func.func @main" in str(second.module)
    # an ONNX model is keyed by its bytes: a hit imports nothing
    assert second.timing.root.find("compile-model") is None and second.timing.root.find("load-model") is None


def test_a_cached_model_saves_and_profiles(cache, tmp_path):
    from tilecraft.runtime import load

    m, counts = compile_counted()
    assert counts[("model", "hit")] == 1
    m.save(tmp_path / "saved")
    np.testing.assert_allclose(load(tmp_path / "saved")(X), expected(), rtol=1e-4, atol=1e-4)
    assert [k for k, _ in m.profile(X, repeat=1)] == m.kernel_calls


def test_other_weights_miss_the_model_but_share_its_kernels(cache):
    other = (W2 * -1.5).astype(np.float32)
    m, counts = compile_counted(two_convs(other))
    assert counts[("model", "miss")] == 1
    assert counts[("object", "hit")] >= 2 and ("object", "write") not in counts
    np.testing.assert_allclose(m(X), expected(other), rtol=1e-4, atol=1e-4)


def test_damaged_entries_are_rebuilt_never_loaded(cache):
    """Each entry damaged in one of four ways: a flipped byte, cut in half,
    another entry's file under its name, not an entry at all."""
    files = sorted(p for p in cache.rglob("*") if p.is_file())
    assert len(files) >= 3
    for n, path in enumerate(files):
        data = path.read_bytes()
        damage = n % 4 if path.parts[-3] == "object" else 0
        if damage == 0:
            path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
        elif damage == 1:
            path.write_bytes(data[: len(data) // 2])
        elif damage == 2:
            path.write_bytes(files[(n + 1) % len(files)].read_bytes())
        else:
            path.write_bytes(b"\x7fELF not a cache entry")
    m, counts = compile_counted()
    assert counts[("model", "rejected")] == 1 and counts.get(("model", "hit"), 0) == 0
    assert counts.get(("object", "hit"), 0) == 0
    assert counts[("object", "rejected")] == counts[("object", "write")] == len(files) - 1
    np.testing.assert_allclose(m(X), expected(), rtol=1e-4, atol=1e-4)
    # rebuilt: the next compile hits again
    _, again = compile_counted()
    assert again[("model", "hit")] == 1


def test_zero_turns_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECRAFT_CACHE_DIR", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() is None
    m, counts = compile_counted()
    assert counts == {}
    assert not any(tmp_path.iterdir())
    np.testing.assert_allclose(m(X), expected(), rtol=1e-4, atol=1e-4)


def test_other_target_features_miss(cache, monkeypatch):
    import tilecraft.backends.llvm.target as target

    real = target.target_description()
    monkeypatch.setattr(target, "target_description", lambda: real + ",-avx512f")
    _, counts = compile_counted()
    assert counts[("model", "miss")] == 1 and counts.get(("object", "hit"), 0) == 0


def test_a_graph_module_is_keyed_by_its_ir_and_weights(cache):
    from tilecraft.driver.compile_model import load_model

    module = load_model(two_convs())
    _, cold = compile_counted(module)
    m, warm = compile_counted(module)
    assert cold[("model", "miss")] == 1 and warm[("model", "hit")] == 1
    assert cold[("object", "hit")] >= 2  # the ONNX model's kernels, seeded
    np.testing.assert_allclose(m(X), expected(), rtol=1e-4, atol=1e-4)


def test_keys_cover_threads_and_fusion():
    from tilecraft.driver.compile_model import load_model, model_key
    from tilecraft.utils.weights import store_of

    module = load_model(two_convs())
    store = store_of(module)
    keys = {model_key(module, store, fuse, threads) for fuse in (True, False) for threads in (1, 2)}
    assert len(keys) == 4


def test_where_the_cache_lives(tmp_path, monkeypatch):
    monkeypatch.delenv("TILECRAFT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "tilecraft"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "tilecraft"
    monkeypatch.setenv("TILECRAFT_CACHE_DIR", str(tmp_path / "moved"))
    assert cache_dir() == tmp_path / "moved"


def test_entries_round_trip_and_reject_other_keys(tmp_path):
    cache = CompileCache(tmp_path)
    cache.put("object", "ab" * 32, b"payload\n\x00bytes")
    assert cache.get("object", "ab" * 32) == b"payload\n\x00bytes"
    assert cache.get("model", "ab" * 32) is None  # another kind
    moved = cache.path("object", "cd" * 32)
    moved.parent.mkdir(parents=True)
    moved.write_bytes(cache.path("object", "ab" * 32).read_bytes())
    assert cache.get("object", "cd" * 32) is None and not moved.exists()
    assert not list(tmp_path.rglob("*.tmp"))  # no temporary file left behind


def test_an_entry_written_in_parts_is_their_concatenation(tmp_path):
    """A model entry is written as its header and its weights' own bytes, one
    after another; the entry (and its checksum) is the concatenation."""
    cache = CompileCache(tmp_path)
    weights = np.arange(12, dtype=np.float32).reshape(3, 4)
    parts = [b"header\n", memoryview(b"\0" * 3), weights.reshape(-1).view(np.uint8)]
    cache.put("model", "ef" * 32, parts)
    whole = b"header\n" + b"\0" * 3 + weights.tobytes()
    assert cache.get("model", "ef" * 32) == whole
    cache.put("model", "12" * 32, whole)
    assert cache.path("model", "12" * 32).read_bytes().split(b"\n", 1)[0].split()[-2:] == (
        cache.path("model", "ef" * 32).read_bytes().split(b"\n", 1)[0].split()[-2:]
    )  # the same length and checksum


def test_keys_depend_on_every_part():
    assert compile_cache.make_key("a", "bc") != compile_cache.make_key("ab", "c")
    assert compile_cache.make_key("x") == compile_cache.make_key("x")
    assert "tilecraft" in compile_cache.environment() and "llvm" in compile_cache.environment()


KERNELS = """
func.func @main(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>) {
  func.call @double_a(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
  func.call @double_b(%b, %c) : (memref<64xf32>, memref<64xf32>) -> ()
  func.return
}
func.func @double_a(%x: memref<64xf32> {tc.name = "x"}, %y: memref<64xf32> {tc.name = "y"}) {
  loop.for %i = 0 to 64 {
    %v = memref.load %x[%i] : memref<64xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i] : memref<64xf32>
  }
  func.return
}
func.func @double_b(%p: memref<64xf32> {tc.name = "p"}, %q: memref<64xf32> {tc.name = "q"}) {
  loop.for %j = 0 to 64 {
    %s = memref.load %p[%j] : memref<64xf32>
    %t = arith.addf %s, %s : f32
    memref.store %t, %q[%j] : memref<64xf32>
  }
  func.return
}
"""


def test_kernels_identical_up_to_names_compile_once(tmp_path):
    from tilecraft.driver.context import parse_text
    from tilecraft.driver.kernels import compile_model_module, split_kernels

    module = parse_text(KERNELS)
    pieces = split_kernels(module)
    kernels = [p for p in pieces if "main" not in p.functions]
    assert len(kernels) == 1 and sorted(kernels[0].functions) == ["double_a", "double_b"]
    stats.clear()
    jit, keys = compile_model_module(module, num_threads=1, cache=CompileCache(tmp_path))
    assert len(keys) == 2 and stats[("object", "write")] == 2
    a = np.arange(64, dtype=np.float32)
    b, c = np.zeros_like(a), np.zeros_like(a)
    jit["main"](a, b, c)
    np.testing.assert_array_equal(c, 4 * a)
    jit["double_b"](a, c)  # a kernel is still callable by its own name
    np.testing.assert_array_equal(c, 2 * a)


def test_parallel_workers_compile_what_one_process_does(tmp_path, monkeypatch):
    import tilecraft.driver.kernels as compiler
    from tilecraft.driver.context import parse_text

    monkeypatch.setattr(compiler, "PARALLEL_MIN_OPS", 0)
    # double_b squares now: two kernels and @main, three objects
    module = parse_text(KERNELS.replace("addf %s, %s", "mulf %s, %s"))
    jit, keys = compiler.compile_model_module(module, num_threads=1, jobs=2)
    assert len(keys) == 3
    a = np.arange(64, dtype=np.float32)
    b, c = np.zeros_like(a), np.zeros_like(a)
    jit["main"](a, b, c)
    np.testing.assert_array_equal(c, (2 * a) ** 2)


def test_main_tells_the_pool_it_runs_its_kernels_do_not():
    """One object per kernel brackets what one module would: `main` enters the
    pool's busy state around all its kernels' launches, a kernel it calls does not."""
    from tilecraft.backends.llvm.compile import build_llvm_module
    from tilecraft.driver.context import parse_text
    from tilecraft.driver.kernels import lower_piece, split_kernels

    module = parse_text(KERNELS.replace("loop.for %i = 0 to 64 {", "loop.for %i = 0 to 64 parallel {"))
    pieces = {p.functions[0]: p for p in split_kernels(module)}
    assert pieces["double_a"].launches and not pieces["double_b"].launches
    assert pieces["main"].entry_points is True and pieces["double_a"].entry_points is False
    for name, piece in pieces.items():
        text = str(build_llvm_module(lower_piece(piece), "shared-pool", 2, entry_points=piece.entry_points))
        assert ("_enter()" in text) == (name == "main"), name
