"""Loop IR to native code: a loop-level module JIT-compiled whole
(`compile_loop_module`, what te functions use), or a model's loop module kernel by
kernel (`compile_model_module`: one cached object per distinct kernel, compiled
in parallel where CPUs are idle, linked by the JIT).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp

from tilecraft.driver.emit import check_argument_types
from tilecraft.utils.gc_pause import compiling


# -- loop IR to native code ------------------------------------------------------------
# The LLVM backend takes the llvm dialect; these lower a loop-level module with the
# loop-to-llvm pipeline first (the caller's module stays as it was).


@compiling
def compile_loop_module(module: ModuleOp, *, num_threads: int | None = None, runtime: str | None = None):
    """JIT-compile every function of a loop-level module for this CPU (a
    `JitModule`: `jit[name]` is called with numpy arrays). `num_threads` defaults
    to `OMP_NUM_THREADS`, else the CPUs this process may run on."""
    import time

    from xdsl.dialects import func

    from tilecraft.backends.llvm.compile import CompileTimes
    from tilecraft.backends.llvm.jit import jit_module, signatures_of
    from tilecraft.pipelines.loop_to_llvm import lower_to_llvm_dialect

    from tilecraft.utils.compile_timing import section

    check_argument_types(module)
    times = CompileTimes()
    start = time.perf_counter()
    with section("loop-to-llvm"):
        lowered = lower_to_llvm_dialect(module)
    times.lower = time.perf_counter() - start
    signatures = signatures_of([op for op in module.ops if isinstance(op, func.FuncOp)])
    with section("LLVM"):
        return jit_module(lowered, signatures, num_threads=num_threads, runtime=runtime, times=times)


# -- a model's loop module, kernel by kernel ------------------------------------------
# A model's loop module is `@main` calling kernels. Each kernel that stands alone
# (memref arguments, no calls, no run-time checks, whose error word is the
# module's) is lowered and compiled to an object file of its own, under a name
# made of its content: identical kernels are compiled once, a kernel is cached
# by its IR (utils/compile_cache.py), and kernels compile in parallel. The rest
# (`@main`, kernels with checks) is one more object; the JIT links them by name.


@dataclass
class CodePiece:
    """One object file's worth of a loop module."""

    module: ModuleOp  # loop level, ready to lower
    functions: list[str]  # the loop module's functions it holds
    symbols: dict[str, str]  # such a function -> the symbol it is compiled under
    text: str = ""  # its IR as printed (a kernel's under the name "kernel")
    key: str = ""  # the cache key of its object (`piece_key`)
    size: int = 0  # its ops: a measure of its compile time
    callees: list[str] = field(default_factory=list)  # kernel symbols it calls (declared)
    # Whether its exported functions tell the thread pool they run (see
    # `runtime.add_parallel_runtime`): never a kernel's, always `main`'s when
    # kernels apart from it launch, else where it launches itself (None).
    entry_points: bool | None = False
    launches: bool = False  # it has a parallel loop


def split_kernels(module: ModuleOp) -> list[CodePiece]:
    """`module`'s functions as pieces: one per kernel that stands alone, named
    `tck_<digest of its IR>` (several identical kernels give one piece), and the
    rest, with calls of those kernels renamed. The caller's module is not changed."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, MemRefType, StringAttr, SymbolRefAttr

    from tilecraft.dialects.loop import AssertOp, ForOp, LoopKind

    functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
    called = {
        op.callee.root_reference.data for f in functions for op in f.walk() if isinstance(op, func.CallOp)
    }
    pieces: dict[str, CodePiece] = {}
    symbols: dict[str, str] = {}
    for f in functions:
        name = f.sym_name.data
        if (
            f.is_declaration
            or name not in called
            or f.sym_visibility is not None
            or not all(isinstance(t, MemRefType) for t in f.function_type.inputs.data)
            or f.function_type.outputs.data
            or any(isinstance(op, (func.CallOp, AssertOp)) for op in f.walk())
        ):
            continue
        clone = f.clone()
        # Up to names: argument names, value names and its own name are no part
        # of what it computes.
        if clone.arg_attrs is not None:
            clone.arg_attrs = ArrayAttr(
                [DictionaryAttr({k: v for k, v in a.data.items() if k != "tc.name"}) for a in clone.arg_attrs.data]
            )
        size, launches = 0, False
        for op in clone.walk():
            size += 1
            launches = launches or (isinstance(op, ForOp) and op.kind.data == LoopKind.PARALLEL)
            for r in op.results:
                r.name_hint = None
            for region in op.regions:
                for block in region.blocks:
                    for arg in block.args:
                        arg.name_hint = None
        clone.sym_name = StringAttr("kernel")
        text = str(clone)
        digest = hashlib.sha256(text.encode()).hexdigest()[:24]
        symbol = f"tck_{digest}"
        symbols[name] = symbol
        if symbol in pieces:
            pieces[symbol].functions.append(name)
            pieces[symbol].symbols[name] = symbol
            continue
        clone.sym_name = StringAttr(symbol)
        piece_module = ModuleOp([clone])
        pieces[symbol] = CodePiece(piece_module, [name], {name: symbol}, text=text, size=size, launches=launches)
    # The rest: every op but the kernels made pieces (cloned alone: cloning the
    # module and erasing the kernels would copy every kernel once more).
    rest = ModuleOp(
        [op.clone() for op in module.ops if not (isinstance(op, func.FuncOp) and op.sym_name.data in symbols)]
    )
    rest.attributes.update(module.attributes)
    rest.properties.update(module.properties)
    rest_names = []
    callees: set[str] = set()
    for f in list(rest.ops):
        if not isinstance(f, func.FuncOp):
            continue
        rest_names.append(f.sym_name.data)
        for op in f.walk():
            if isinstance(op, func.CallOp) and op.callee.root_reference.data in symbols:
                symbol = symbols[op.callee.root_reference.data]
                op.callee = SymbolRefAttr(symbol)
                callees.add(symbol)
    result = list(pieces.values())
    if rest_names:
        size = sum(1 for _ in rest.walk())
        others_launch = any(p.launches for p in result)
        result.append(
            CodePiece(
                rest, rest_names, {}, text=str(rest), size=size, callees=sorted(callees),
                entry_points=True if others_launch else None,
            )
        )
    return result


def piece_key(piece: CodePiece, num_threads: int, flavour: str) -> str:
    """The cache key of a piece's object: its IR, the target and the threads."""
    from tilecraft.backends.llvm.target import target_description
    from tilecraft.utils.compile_cache import make_key

    return make_key(
        "object",
        piece.text,
        target_description(),
        f"threads={num_threads}",
        f"runtime={flavour}",
        f"entry_points={piece.entry_points}",
    )


def compile_piece(piece: CodePiece, num_threads: int) -> bytes:
    """A piece lowered (loop-to-llvm, in place: the piece is used up) and
    compiled to an object file."""
    from tilecraft.backends.llvm.jit import emit_jit_object
    from tilecraft.utils.compile_timing import section

    lowered = lower_piece(piece)
    with section("LLVM"):
        return emit_jit_object(lowered, num_threads=num_threads, entry_points=piece.entry_points)


def lower_piece(piece: CodePiece) -> ModuleOp:
    """A piece in the llvm dialect (lowered in place), the kernels it calls declared."""
    from xdsl.dialects import llvm

    from tilecraft.pipelines.loop_to_llvm import lower_to_llvm_dialect
    from tilecraft.utils.compile_timing import section

    arities = _arities(piece.module, piece.callees)  # before the calls are lowered
    with section("loop-to-llvm"):
        lowered = lower_to_llvm_dialect(piece.module, in_place=True)
    for symbol in piece.callees:
        lowered.body.block.add_op(
            llvm.FuncOp(symbol, llvm.LLVMFunctionType(arities[symbol]), linkage=llvm.LinkageAttr("external"))
        )
    return lowered


def _arities(module: ModuleOp, symbols: list[str]) -> dict[str, list]:
    """The LLVM argument types `module`'s calls pass each of `symbols`: a pointer
    per memref, then an i64 per `?` size of it (convert-loop-to-llvm's convention)."""
    from xdsl.dialects import func, llvm
    from xdsl.dialects.builtin import MemRefType, i64

    wanted = set(symbols)
    arities: dict[str, list] = {}
    for op in module.walk():
        if isinstance(op, func.CallOp) and op.callee.root_reference.data in wanted:
            types: list = []
            for a in op.arguments:
                types.append(llvm.LLVMPointerType())
                if isinstance(a.type, MemRefType):
                    types.extend([i64] * sum(d < 0 for d in a.type.get_shape()))
            arities[op.callee.root_reference.data] = types
    return arities


@compiling
def compile_model_module(
    module: ModuleOp,
    *,
    num_threads: int | None = None,
    cache=None,
    jobs: int | None = None,
):
    """JIT-compile a model's loop module piece by piece (`split_kernels`): each
    piece's object comes from `cache` (a `CompileCache`, or None) or is compiled,
    in `jobs` processes when there is enough to compile (default: `idle_cpus()`);
    the JIT links them. Returns the `JitModule` and the
    pieces' cache keys (in link order)."""
    from xdsl.dialects import func

    from tilecraft.backends.llvm.jit import jit_flavour, jit_objects, signatures_of
    from tilecraft.backends.llvm.runtime import default_flavour
    from tilecraft.utils.compile_timing import section
    from tilecraft.utils.threads import resolve_threads

    threads = resolve_threads(num_threads)
    flavour = jit_flavour(default_flavour())
    check_argument_types(module)
    signatures = signatures_of([op for op in module.ops if isinstance(op, func.FuncOp)])
    with section("split"):
        pieces = split_kernels(module)
        for piece in pieces:
            piece.key = piece_key(piece, threads, flavour)
    objects: list[bytes | None] = [None] * len(pieces)
    if cache is not None:
        with section("cache read"):
            objects = [cache.get("object", p.key) for p in pieces]
    todo = [n for n, o in enumerate(objects) if o is None]
    jobs = idle_cpus() if jobs is None else jobs
    for n, data in zip(todo, compile_pieces([pieces[n] for n in todo], threads, jobs)):
        objects[n] = data
        if cache is not None:
            cache.put("object", pieces[n].key, data)
    symbols = {name: symbol for p in pieces for name, symbol in p.symbols.items()}
    jit = jit_objects(objects, signatures, symbols=symbols, num_threads=threads)  # type: ignore[arg-type]
    return jit, [p.key for p in pieces]


def idle_cpus() -> int:
    """The CPUs this process may run on that other processes leave idle (by the
    load average, this process counted idle): workers beyond those would only
    take turns on busy cores (a test suite on every core, a shared machine)."""
    import os

    from tilecraft.utils.threads import available_cpus

    cpus = available_cpus()
    try:
        load = os.getloadavg()[0]
    except OSError:
        return cpus
    return max(1, min(cpus, round(cpus - load + 1)))


# Below this many loop-level ops to compile (a second or two of work), forking
# workers costs more than it saves.
PARALLEL_MIN_OPS = 300


def compile_pieces(pieces: list[CodePiece], num_threads: int, jobs: int) -> list[bytes]:
    """The pieces' objects, compiled here or, with `jobs` > 1 and enough work, in
    forked worker processes (xDSL's passes hold the GIL; a fork needs no IR sent)."""
    import gc
    import multiprocessing
    import sys

    from tilecraft.utils.compile_timing import current_timer, section

    total = sum(p.size for p in pieces)
    if jobs <= 1 or len(pieces) < 2 or total < PARALLEL_MIN_OPS or sys.platform != "linux":
        return [compile_piece(p, num_threads) for p in pieces]
    from tilecraft.backends.llvm.jit import jit_flavour
    from tilecraft.backends.llvm.runtime import default_flavour, shared_pool_launch

    if jit_flavour(default_flavour()) == "shared-pool":
        shared_pool_launch(num_threads)  # once here, not once per worker
    global _PIECES
    _PIECES = (pieces, num_threads, current_timer() is not None)
    order = sorted(range(len(pieces)), key=lambda n: -pieces[n].size)  # longest first
    results: list[bytes] = [b""] * len(pieces)
    # Frozen, the objects that exist now are never traversed by the workers'
    # garbage collector, which would copy every page of them into each worker.
    gc.freeze()
    try:
        with section("compile kernels (parallel)"):
            context = multiprocessing.get_context("fork")
            with context.Pool(min(jobs, len(pieces))) as pool:
                for n, data, timing in pool.imap_unordered(_compile_piece_at, order):
                    results[n] = data
                    if timing is not None:
                        _merge_timing(timing)
    finally:
        gc.unfreeze()
        _PIECES = None
    return results


_PIECES: tuple[list[CodePiece], int, bool] | None = None


@compiling
def _compile_piece_at(n: int):
    """In a worker: the `n`-th piece's object (and the worker's timing of it)."""
    from tilecraft.utils.compile_timing import collect_timing

    assert _PIECES is not None
    pieces, threads, timed = _PIECES
    if not timed:
        return n, compile_piece(pieces[n], threads), None
    with collect_timing() as timer:
        data = compile_piece(pieces[n], threads)
    return n, data, timer.root.as_dict()


def _merge_timing(tree: dict) -> None:
    """A worker's sections, added under the open section of this process's timer."""
    from tilecraft.utils.compile_timing import current_timer

    timer = current_timer()
    if timer is None:
        return

    def merge(children: dict, depth: int) -> None:
        for name, node in children.items():
            timer.record(name, node["seconds"], node["count"])
            if node["children"]:
                with timer.nested(name):
                    merge(node["children"], depth + 1)

    merge(tree["children"], 0)
