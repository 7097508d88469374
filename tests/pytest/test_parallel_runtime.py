"""The parallel runtime: dynamic chunks, both flavours, the JIT's shared pool and
the pool of ahead-of-time code (shared libraries).

Every kernel here counts: iteration i adds one to its own element, so after a
call an element holds how many times its iteration ran. A chunk run twice, a
chunk skipped, or two threads racing on one chunk shows up as a count other than
the number of calls. Extents 0..67 cover loops shorter than the thread count and
than the chunk count, primes, and counts that divide unevenly; thread counts and
chunks per thread are varied so the number of chunks is awkward too. These
kernels are far too small to pay for a second thread (`loop-outline-parallel`
would run them on the caller alone), so they carry a cap above every thread
count used here, and the pool runs them on all its threads. No timings are
asserted (see the module docstring of backends/llvm/runtime.py).
"""

from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from tilecraft.driver.emit import emit_llvm_ir, emit_shared_library
from tilecraft.driver.kernels import compile_loop_module
from tilecraft.backends.llvm import runtime
from tilecraft.driver.context import parse_text

EXTENTS = range(68)
SHIFTED = (0, 1, 2, 3, 5, 16, 17, 31, 64, 67)  # extents also run from a lower bound > 0
SIZE = 80  # every buffer; iterations past the extent must stay untouched
LOWER = 5  # the lower bound of the shifted loops
UNCAPPED = 64  # a thread cap above every thread count here


def counting_function(name: str, lb: int, extent: int, cap: int | None = UNCAPPED) -> str:
    """`@name(%B)`: B[i] += 1 for i in [lb, lb + extent), in parallel on at most
    `cap` threads (None: as many as its work pays for, which is one)."""
    attributes = "" if cap is None else f" {{tc.max_threads = {cap}}}"
    return f"""
func.func @{name}(%B: memref<{SIZE}xi32>) {{
  %one = arith.constant 1 : i32
  loop.for %i = {lb} to {lb + extent} parallel {{
    %b = memref.load %B[%i] : memref<{SIZE}xi32>
    %c = arith.addi %b, %one : i32
    memref.store %c, %B[%i] : memref<{SIZE}xi32>
  }}{attributes}
  func.return
}}"""


def counting_module() -> str:
    """One function per extent (and per shifted extent): one compile for all."""
    return "\n".join(
        [counting_function(f"count{n}", 0, n) for n in EXTENTS]
        + [counting_function(f"shifted{n}", LOWER, n) for n in SHIFTED]
    )


def expected(lb: int, extent: int, calls: int) -> np.ndarray:
    counts = np.zeros(SIZE, np.int32)
    counts[lb : lb + extent] = calls
    return counts


def check_counts(call, calls: int = 3) -> None:
    """`call(name, buffer)` runs function `name`; every iteration must run once per call."""
    cases = [(f"count{n}", 0, n) for n in EXTENTS]
    cases += [(f"shifted{n}", LOWER, n) for n in SHIFTED]
    for name, lb, n in cases:
        counts = np.zeros(SIZE, np.int32)
        for _ in range(calls):
            call(name, counts)
        np.testing.assert_array_equal(counts, expected(lb, n, calls), err_msg=name)


FLAVOURS_AND_THREADS = [("pool", 1), ("pool", 2), ("pool", 3), ("pool", 7)]
FLAVOURS_AND_THREADS += [("pthread", 2), ("pthread", 7)]


@pytest.mark.parametrize("flavour, threads", FLAVOURS_AND_THREADS)
def test_every_iteration_runs_exactly_once(flavour, threads):
    jit = compile_loop_module(parse_text(counting_module()), num_threads=threads, runtime=flavour)
    check_counts(lambda name, counts: jit[name](counts))


@pytest.mark.parametrize("chunks_per_thread", [1, 5])
def test_awkward_chunk_counts(monkeypatch, chunks_per_thread):
    """1 chunk per thread is the old static split; 3 threads x 5 = 15 chunks
    divides none of the interesting extents."""
    monkeypatch.setattr(runtime, "CHUNKS_PER_THREAD", chunks_per_thread)
    jit = compile_loop_module(
        parse_text(counting_module()), num_threads=3, runtime=runtime.default_flavour()
    )
    check_counts(lambda name, counts: jit[name](counts))


def test_many_calls_count_exactly():
    """Back-to-back launches reuse the process's pool: a thread still finishing
    one launch must not take a chunk of the next."""
    jit = compile_loop_module(parse_text(counting_function("f", 0, 67)), num_threads=2)
    counts = np.zeros(SIZE, np.int32)
    for _ in range(2000):
        jit["f"](counts)
    np.testing.assert_array_equal(counts, expected(0, 67, 2000))


@pytest.mark.parametrize("flavour", ["pool", "pthread"])
def test_nested_parallel_loops_count_exactly(flavour):
    """Only the outer loop is parallel; the inner one runs serially inside each chunk."""
    text = """
func.func @f(%B: memref<13x11xi32>) {
  %one = arith.constant 1 : i32
  loop.for %i = 0 to 13 parallel {
    loop.for %j = 0 to 11 parallel {
      %b = memref.load %B[%i, %j] : memref<13x11xi32>
      %c = arith.addi %b, %one : i32
      memref.store %c, %B[%i, %j] : memref<13x11xi32>
    }
  } {tc.max_threads = 64}
  func.return
}"""
    jit = compile_loop_module(parse_text(text), num_threads=3, runtime=flavour)
    counts = np.zeros((13, 11), np.int32)
    for _ in range(5):
        jit["f"](counts)
    np.testing.assert_array_equal(counts, np.full((13, 11), 5, np.int32))
    # One launch per call, from the outer loop only.
    assert jit.llvm_ir.count("define internal void @f_parallel") == 1


def test_launch_hands_out_chunks_from_an_atomic_counter():
    ir = emit_llvm_ir(parse_text(counting_function("f", 0, 67)), num_threads=3)
    assert "atomicrmw add ptr" in ir


def shared_library(tmp_path, source: str, threads: int) -> ctypes.CDLL:
    library = tmp_path / f"lib{threads}.so"
    emit_shared_library(parse_text(source), library, num_threads=threads)
    return ctypes.CDLL(str(library))


def native_call(native: ctypes.CDLL):
    def call(name, counts):
        getattr(native, name)(counts.ctypes.data_as(ctypes.c_void_p))

    return call


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_shared_library_counts_exactly(tmp_path, threads):
    """Shared libraries use the pool: threads started by the first launch."""
    check_counts(native_call(shared_library(tmp_path, counting_module(), threads)), calls=5)


@pytest.mark.parametrize("chunks_per_thread", [1, 5])
def test_pool_with_awkward_chunk_counts(monkeypatch, tmp_path, chunks_per_thread):
    monkeypatch.setattr(runtime, "CHUNKS_PER_THREAD", chunks_per_thread)
    check_counts(native_call(shared_library(tmp_path, counting_module(), 3)))


def test_pool_many_launches_count_exactly(tmp_path):
    """Back-to-back launches of the pool: a worker still finishing one launch must
    not take a chunk of the next, nor miss a launch while it falls asleep."""
    call = native_call(shared_library(tmp_path, counting_function("f", 0, 67), 3))
    counts = np.zeros(SIZE, np.int32)
    for _ in range(3000):
        call("f", counts)
    np.testing.assert_array_equal(counts, expected(0, 67, 3000))


def test_pool_counts_across_sleeps(tmp_path):
    """Launches at gaps from none to past the spin, so that workers join, come
    after the launch closed (they must not touch it), or sleep on the futex and
    are woken: every iteration still runs exactly once per call."""
    call = native_call(shared_library(tmp_path, counting_function("f", 0, 67), 3))
    counts = np.zeros(SIZE, np.int32)
    gaps = [0.0, 1e-5, 3e-5, 1e-4, 1e-3, 5e-3]
    for n in range(60):
        call("f", counts)
        end = time.perf_counter() + gaps[n % len(gaps)]
        while time.perf_counter() < end:
            pass
    np.testing.assert_array_equal(counts, expected(0, 67, 60))


def count_in_threads(calls: dict, times: int = 1500) -> dict[str, np.ndarray]:
    """Run each `call(counts)` `times` times on a thread of its own, all at once;
    each one's counts by name."""
    results = {}

    def caller(name):
        counts = np.zeros(SIZE, np.int32)
        for _ in range(times):
            calls[name](counts)
        results[name] = counts

    threads = [threading.Thread(target=caller, args=(name,)) for name in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_pool_launches_from_two_caller_threads(tmp_path):
    """Two threads launching at once: one owns the pool, the other runs its chunks
    on its own thread; both count exactly (ctypes releases the GIL)."""
    call = native_call(shared_library(tmp_path, counting_module(), 3))
    results = count_in_threads({n: (lambda counts, n=n: call(n, counts)) for n in ("count67", "count31")})
    np.testing.assert_array_equal(results["count67"], expected(0, 67, 1500))
    np.testing.assert_array_equal(results["count31"], expected(0, 31, 1500))


POOL_PROGRAM = """
import ctypes, os, sys, time
import numpy as np
native = ctypes.CDLL(sys.argv[1])
counts = np.zeros({size}, np.int32)
def call(n):
    for _ in range(n):
        native.f(counts.ctypes.data_as(ctypes.c_void_p))
"""


def run_pool_program(tmp_path, body: str) -> subprocess.CompletedProcess:
    library = tmp_path / "libpool.so"
    emit_shared_library(parse_text(counting_function("f", 0, 67)), library, num_threads=3)
    program = POOL_PROGRAM.format(size=SIZE) + body
    return subprocess.run(
        [sys.executable, "-c", program, str(library)], capture_output=True, text=True, timeout=120
    )


def test_pool_in_a_forked_child(tmp_path):
    """The child of a fork has none of the pool's threads: its first launch starts
    them again (libgomp's pool hangs there). The parent's pool is unaffected."""
    done = run_pool_program(
        tmp_path,
        "call(10)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    call(10)\n"
        "    print('child', int(counts.sum()), flush=True)\n"
        "    os._exit(0)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "call(5)\n"
        "print('parent', int(counts.sum()), status)\n",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["child", str(20 * 67), "parent", str(15 * 67), "0"]


def test_pool_survives_dlclose_and_exit(tmp_path):
    """The library is linked nodelete: dlclose leaves it mapped, so workers that
    are still spinning in it do not run unmapped code; the process exits with
    the workers spinning or asleep, cleanly."""
    done = run_pool_program(
        tmp_path,
        "call(50)\n"
        "libdl = ctypes.CDLL(None)\n"
        "libdl.dlclose.argtypes = [ctypes.c_void_p]\n"
        "print(libdl.dlclose(native._handle))\n"
        "time.sleep(0.05)\n"
        "call(1)\n"
        "print(int(counts.sum()))\n",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", str(51 * 67)]


def test_shared_library_uses_the_pool():
    ir = emit_llvm_ir(parse_text(counting_function("f", 0, 67)), num_threads=3)
    assert "@tilecraft_pool_thread" in ir and "@pthread_join" not in ir


def test_spinning_threads_do_not_crash_the_exit():
    """The process exits right after its last launch, while the shared pool's
    workers still spin in its code: cleanly (the pool is never freed; libgomp,
    the JIT's runtime before, was unloaded under its spinning threads: a
    segfault at exit)."""
    program = (
        "import numpy as np\n"
        "from tilecraft.driver.context import parse_text\nfrom tilecraft.driver.kernels import compile_loop_module\n"
        f"source = {counting_function('count', 0, 67)!r}\n"
        "native = compile_loop_module(parse_text(source))\n"
        f"counts = np.zeros({SIZE}, np.int32)\n"
        "for _ in range(50):\n"
        "    native['count'](counts)\n"
        "print(int(counts.sum()))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(50 * 67)]


# -- entry points: the workers spin while a call runs ------------------------------

TWO_LEVELS = """
func.func @kernel(%B: memref<80xi32>) {
  %one = arith.constant 1 : i32
  loop.for %i = 0 to 67 parallel {
    %b = memref.load %B[%i] : memref<80xi32>
    %c = arith.addi %b, %one : i32
    memref.store %c, %B[%i] : memref<80xi32>
  } {tc.max_threads = 64}
  func.return
}
func.func @model(%B: memref<80xi32>, %S: memref<80xi32>) {
  func.call @kernel(%B) : (memref<80xi32>) -> ()
  %one = arith.constant 1 : i32
  loop.for %r = 0 to 20000 {
    loop.for %i = 0 to 80 {
      %s = memref.load %S[%i] : memref<80xi32>
      %t = arith.addi %s, %one : i32
      memref.store %t, %S[%i] : memref<80xi32>
    }
  }
  func.call @kernel(%B) : (memref<80xi32>) -> ()
  func.return
}"""


def _calls_in(ir_text: str, function: str) -> list[str]:
    body = ir_text.split(f"@{function}(", 1)[1].split("\n}", 1)[0]
    return [line.split("@", 1)[1].split("(", 1)[0] for line in body.splitlines() if " call " in line]


def test_entry_points_tell_the_pool_they_run():
    """A function the module exports and does not call itself (a model's main)
    enters the pool's busy state first and leaves it before returning; a kernel it
    calls does not (one enter per model call, not per kernel)."""
    jit = compile_loop_module(parse_text(TWO_LEVELS), num_threads=3)
    pool = f"tilecraft_pool_launch_3x{3 * runtime.CHUNKS_PER_THREAD}"
    model = _calls_in(jit.llvm_ir, "model")
    assert model[0] == f"{pool}_enter" and model[-1] == f"{pool}_exit", model
    assert f"{pool}_enter" not in _calls_in(jit.llvm_ir, "kernel")
    aot = emit_llvm_ir(parse_text(TWO_LEVELS), optimize=False, num_threads=3)
    assert "define internal void @tilecraft_parallel_enter()" in aot
    assert _calls_in(aot, "model")[0] == "tilecraft_parallel_enter"


def test_no_pool_no_entry_bracket():
    """A module without parallel loops has no pool and nothing to tell it."""
    jit = compile_loop_module(parse_text(TWO_LEVELS.replace(" parallel {", " {")), num_threads=3)
    assert "_enter" not in jit.llvm_ir


@pytest.mark.parametrize("where", ["jit", "library"])
def test_launches_around_a_long_serial_stretch(tmp_path, where):
    """A call that launches, runs a serial stretch far past the spin, then launches
    again (workers kept spinning in between), called at gaps that let them sleep
    between calls: every iteration runs exactly once per launch."""
    if where == "jit":
        jit = compile_loop_module(parse_text(TWO_LEVELS), num_threads=3)
        model = lambda b, s: jit["model"](b, s)  # noqa: E731
    else:
        library = shared_library(tmp_path, TWO_LEVELS, 3)
        model = lambda b, s: library.model(b.ctypes.data_as(ctypes.c_void_p), s.ctypes.data_as(ctypes.c_void_p))  # noqa: E731
    counts, serial = np.zeros(SIZE, np.int32), np.zeros(SIZE, np.int32)
    for n in range(12):
        model(counts, serial)
        time.sleep((0.0, 1e-4, 2e-3)[n % 3])
    np.testing.assert_array_equal(counts, expected(0, 67, 24))
    np.testing.assert_array_equal(serial, np.full(SIZE, 12 * 20000, np.int32))


# -- the JIT's shared pool -------------------------------------------------------


def test_jit_modules_call_the_process_pool():
    """A JIT module's launch is a call into the process's pool, one pool per thread
    count: the module has no pool (threads) of its own."""
    jit = compile_loop_module(parse_text(counting_function("f", 0, 67)), num_threads=3)
    assert f"@tilecraft_pool_launch_3x{3 * runtime.CHUNKS_PER_THREAD}" in jit.llvm_ir
    assert "tilecraft_pool_thread" not in jit.llvm_ir


def test_shared_pool_outlives_the_modules_that_used_it():
    """The pool's workers wait in the pool's code, not the module's: a module that
    ran launches can be freed while they spin, and later modules use the pool."""
    for round_ in range(4):
        jit = compile_loop_module(parse_text(counting_function("f", 0, 67)), num_threads=3)
        counts = np.zeros(SIZE, np.int32)
        for _ in range(20):
            jit["f"](counts)
        np.testing.assert_array_equal(counts, expected(0, 67, 20), err_msg=f"round {round_}")
        del jit
        gc.collect()


def test_shared_pool_launches_from_two_caller_threads():
    """Two threads launching at once on the JIT's pool (two modules): both count
    exactly (the one that finds the pool busy runs its chunks alone)."""
    first = compile_loop_module(parse_text(counting_function("f", 0, 67)), num_threads=3)
    second = compile_loop_module(parse_text(counting_function("f", 0, 31)), num_threads=3)
    results = count_in_threads({"first": first["f"], "second": second["f"]})
    np.testing.assert_array_equal(results["first"], expected(0, 67, 1500))
    np.testing.assert_array_equal(results["second"], expected(0, 31, 1500))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_shared_pool_in_a_forked_child():
    """A child of os.fork that runs a parallel kernel after its parent ran one
    (libgomp, the JIT's runtime before, hung there): the pool is reset in the
    child and starts its threads again; the parent's pool is unaffected."""
    program = (
        "import os\n"
        "import numpy as np\n"
        "from tilecraft.driver.context import parse_text\nfrom tilecraft.driver.kernels import compile_loop_module\n"
        f"source = {counting_function('count', 0, 67)!r}\n"
        "jit = compile_loop_module(parse_text(source), num_threads=3)\n"
        f"counts = np.zeros({SIZE}, np.int32)\n"
        "def call(n):\n"
        "    for _ in range(n):\n"
        "        jit['count'](counts)\n"
        "call(10)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    call(10)\n"
        "    threads = len(os.listdir('/proc/self/task'))\n"
        "    print('child', int(counts.sum()), threads, flush=True)\n"
        "    os._exit(0)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "call(5)\n"
        "print('parent', int(counts.sum()), status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # The child's only thread plus the pool's two, started again in the child.
    expected_output = ["child", str(20 * 67), "3", "parent", str(15 * 67), "0"]
    assert done.stdout.split() == expected_output


def test_unknown_runtime_is_refused():
    with pytest.raises(ValueError, match="unknown parallel runtime 'gomp'"):
        compile_loop_module(parse_text(counting_function("f", 0, 67)), runtime="gomp")


# -- thread caps: a launch runs on at most `tc.max_threads` threads ----------------

IDS = 64  # slots of the launch probe: at least 4 threads x CHUNKS_PER_THREAD, plus one
_ENGINES = []  # the JIT's probes stay: the shared pool's workers may still be in them


def launch_probe(tmp_path, flavour: str, threads: int):
    """`run(ids, cap)`: one launch capped at `cap` whose task writes the thread
    that ran chunk c into ids[c] and the chunk count into ids[IDS - 1], then
    sleeps a little so that every thread allowed in has time to join. Built
    around the runtime's launch directly: what a launch runs on is the runtime's
    whole business, and a loop-level kernel cannot ask which thread it is on.
    The pool of a module's own runs in a shared library (as ahead-of-time code
    does: the JIT cannot resolve its `pthread_atfork`)."""
    import shutil

    import llvmlite.binding as llvm_binding
    from llvmlite import ir
    from tilecraft.backends.llvm.target import (
        create_host_target_machine,
        host_target_machine,
        parse_and_optimize,
        triple_and_layout,
    )

    i32, i64, ptr = ir.IntType(32), ir.IntType(64), ir.PointerType()
    module = ir.Module("probe")
    module.triple, module.data_layout = triple_and_layout()
    launch = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, ptr, i32]), runtime.PARALLEL_LAUNCH)
    self_id = ir.Function(module, ir.FunctionType(i64, []), "pthread_self")
    usleep = ir.Function(module, ir.FunctionType(i32, [i32]), "usleep")
    task = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, i32, i32]), "probe_task")
    task.linkage = "internal"
    b = ir.IRBuilder(task.append_basic_block())
    ids, chunk, chunks = task.args
    b.store(b.call(self_id, []), b.gep(ids, [b.zext(chunk, i64)], source_etype=i64))
    b.store(b.zext(chunks, i64), b.gep(ids, [i64(IDS - 1)], source_etype=i64))
    b.call(usleep, [i32(200)])
    b.ret_void()
    run = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, i32]), "run")
    b = ir.IRBuilder(run.append_basic_block())
    b.call(launch, [task, *run.args])
    b.ret_void()
    runtime.add_parallel_runtime(module, flavour, threads)
    if flavour == "pool":
        cc = shutil.which("cc") or pytest.skip("links a shared library with cc")
        (tmp_path / "probe.o").write_bytes(host_target_machine().emit_object(parse_and_optimize(str(module))))
        library = tmp_path / "libprobe.so"
        subprocess.run([cc, "-shared", "-Wl,-z,nodelete", "-o", library, tmp_path / "probe.o", "-lpthread"], check=True)
        run = ctypes.CDLL(str(library)).run
        run.argtypes = [ctypes.c_void_p, ctypes.c_int32]
    else:
        engine = llvm_binding.create_mcjit_compiler(
            parse_and_optimize(str(module)), create_host_target_machine(jit=True)
        )
        engine.finalize_object()
        _ENGINES.append(engine)
        run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32)(engine.get_function_address("run"))

    def probe(cap: int) -> tuple[set[int], int, int]:
        """(the threads that ran chunks, the chunk count, how many chunks ran)."""
        ids = np.zeros(IDS, np.uint64)
        run(ids.ctypes.data, cap)
        ran = ids[: IDS - 1]
        return set(ran[ran != 0].tolist()), int(ids[IDS - 1]), int(np.count_nonzero(ran))

    return probe


@pytest.mark.parametrize("flavour", ["pool", "shared-pool", "pthread"])
def test_a_launch_runs_on_at_most_its_cap(tmp_path, flavour):
    """Cap 1 runs the loop as one chunk on the calling thread (no pool traffic);
    cap c splits it into c x CHUNKS_PER_THREAD chunks of which at most c threads
    run some; a cap above the thread count is the thread count."""
    probe = launch_probe(tmp_path, flavour, threads=4)
    per_thread = runtime.CHUNKS_PER_THREAD
    caller = threading.get_ident()  # pthread_self() of this thread
    for _ in range(3):
        threads, chunks, ran = probe(1)
        assert (threads, chunks, ran) == ({caller}, 1, 1)
        for cap in (2, 3):
            threads, chunks, ran = probe(cap)
            assert chunks == ran == cap * per_thread
            assert 1 <= len(threads) <= cap, threads
        threads, chunks, ran = probe(runtime.NO_THREAD_CAP)
        assert chunks == ran == 4 * per_thread
        assert 1 <= len(threads) <= 4


@pytest.mark.parametrize("where", ["jit", "library"])
def test_capped_launches_count_exactly(tmp_path, where):
    """Launches capped below the pool's 7 threads, then not, back to back: the
    workers a cap keeps out must not take chunks, nor miss the next launch."""
    source = "\n".join(
        [counting_function(f"cap{cap}_{n}", 0, n, cap) for cap in (1, 2, 3, UNCAPPED) for n in (1, 7, 31, 67)]
    )
    if where == "jit":
        jit = compile_loop_module(parse_text(source), num_threads=7)
        call = lambda name, counts: jit[name](counts)  # noqa: E731
    else:
        call = native_call(shared_library(tmp_path, source, 7))
    counts = {name: np.zeros(SIZE, np.int32) for cap in (1, 2, 3, UNCAPPED) for name in
              (f"cap{cap}_{n}" for n in (1, 7, 31, 67))}  # fmt: skip
    for _ in range(100):
        for name, buffer in counts.items():
            call(name, buffer)
    for name, buffer in counts.items():
        np.testing.assert_array_equal(buffer, expected(0, int(name.split("_")[1]), 100), err_msg=name)


def test_a_cap_of_one_leaves_no_launch():
    """A launch capped at one thread is a call of the loop's body on the caller:
    a module whose launches all are has no runtime, no pool and no threads."""
    ir = emit_llvm_ir(parse_text(counting_function("f", 0, 67, cap=1)), optimize=False, num_threads=3)
    assert "call void @f_parallel0(" in ir
    assert "tilecraft_parallel_launch" not in ir and "tilecraft_pool" not in ir
    jit = compile_loop_module(parse_text(counting_function("f", 0, 67, cap=None)), num_threads=3)
    assert "tilecraft_pool" not in jit.llvm_ir  # 67 additions pay for no thread
    counts = np.zeros(SIZE, np.int32)
    jit["f"](counts)
    np.testing.assert_array_equal(counts, expected(0, 67, 1))


# -- the decision: a kernel's work picks its threads -------------------------------


def launch_caps(module) -> list[int]:
    """`tc.max_threads` of each launch `loop-outline-parallel` makes of `module`
    (run after the loop-to-llvm passes before it, as the backend runs it)."""
    from tilecraft.dialects.loop import LaunchOp
    from tilecraft.pipelines.loop_to_llvm import loop_to_llvm_passes
    from xdsl.context import Context

    module = module.clone()
    for stage in loop_to_llvm_passes():
        stage.apply(Context(), module)
        if stage.name == "loop-outline-parallel":
            break
    return [op.attributes["tc.max_threads"].value.data for op in module.walk() if isinstance(op, LaunchOp)]


def test_work_decides_how_many_threads_a_kernel_gets():
    """A 64-float add is not worth a second thread: it runs on the caller, and
    right. A 256 x 256 x 256 matmul is worth all of a 16-core machine's."""
    import tilecraft as tc
    from tilecraft import te
    from tilecraft.api import lower_module

    rng = np.random.default_rng(0)
    A = te.placeholder((64,), "float32", name="A")
    B = te.placeholder((64,), "float32", name="B")
    C = te.compute((64,), lambda i: A[i] + B[i], name="C")
    s = te.create_schedule(C)
    outer, inner = s[C].split(C.op.axis[0], factor=16)
    s[C].parallel(outer)
    s[C].vectorize(inner)
    assert launch_caps(lower_module(s, [A, B, C])) == [1]
    a, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    c = np.zeros(64, np.float32)
    tc.build(s, [A, B, C])(a, b, c)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)

    n = 256
    X = te.placeholder((n, n), "float32", name="X")
    Y = te.placeholder((n, n), "float32", name="Y")
    k = te.reduce_axis((0, n), name="k")
    Z = te.compute((n, n), lambda i, j: te.sum(X[i, k] * Y[k, j], axis=k), name="Z")
    s = te.create_schedule(Z)
    io, jo, ii, ji = s[Z].tile(Z.op.axis[0], Z.op.axis[1], 8, 32)
    s[Z].vectorize(ji)
    s[Z].parallel(io)
    assert launch_caps(lower_module(s, [X, Y, Z]))[0] >= 16
    x, y = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)
    z = np.zeros((n, n), np.float32)
    tc.build(s, [X, Y, Z])(x, y, z)
    np.testing.assert_allclose(z, x @ y, rtol=1e-4, atol=1e-3)


def test_work_estimate_counts_what_runs():
    """The estimate: data ops times the iterations around them, a vectorized loop
    by its 512-bit vectors, a guard its body, an scf.if its dearer branch, a
    transcendental 16; constants and index arithmetic nothing."""
    from tilecraft.analysis.parallel_work import MATH_OP_UNITS, loop_work, max_threads
    from tilecraft.dialects.loop import ForOp

    module = parse_text("""
func.func @f(%A: memref<8x64xf32>, %D: memref<8x64xf64>) {
  %zero = arith.constant 0.0 : f32
  loop.for %i = 0 to 8 parallel {
    loop.for %j = 0 to 64 vectorized {
      %c1 = arith.constant 1 : index
      %k = arith.addi %j, %c1 : index
      %a = memref.load %A[%i, %j] : memref<8x64xf32>
      %p = arith.cmpf ogt, %a, %zero : f32
      loop.guard %p {
        %e = math.exp %a : f32
        memref.store %e, %A[%i, %j] : memref<8x64xf32>
      }
    }
    loop.for %j = 0 to 64 vectorized {
      %d = memref.load %D[%i, %j] : memref<8x64xf64>
      %r = scf.if %true -> (f64) {
        %s = arith.addf %d, %d : f64
        %t = arith.mulf %s, %d : f64
        scf.yield %t : f64
      } else {
        scf.yield %d : f64
      }
      memref.store %r, %D[%i, %j] : memref<8x64xf64>
    }
  }
  func.return
}""".replace("%true", "%p2").replace("      %r = scf.if", "      %p2 = arith.cmpf ogt, %d, %d : f64\n      %r = scf.if"))
    loop = next(op for op in module.walk() if isinstance(op, ForOp))
    f32_part = 64 // 16 * (1 + 1 + MATH_OP_UNITS + 1)  # 4 vectors of load, cmpf, exp, store
    f64_part = 64 // 8 * (1 + 1 + 2 + 1)  # 8 vectors of load, cmpf, (addf, mulf), store
    assert loop_work(loop) == 8 * (f32_part + f64_part)
    assert [max_threads(w, 10) for w in (0, 19, 20, 59, 60, 10**9)] == [1, 1, 2, 2, 3, 1024]
    assert max_threads(10**9, 0) == 1024  # no cost: no cap
