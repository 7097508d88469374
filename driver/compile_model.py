"""The model compile driver: a model in, what `CompiledModel` is made of out.

```
ONNX / graph module ──compile-model (pipelines/compile_model.py)──▶ loop module
  ──LLVM, kernel by kernel (driver/kernels.py)──▶ @main: one native call per model call
```

The pipeline is the `compile-model` pass, the same one `tilecraft-opt -p
compile-model` runs, so the model's IR is the text that tool prints. The
caller's weight store is never written: the passes get a child of it.
`tilecraft.compile` (runtime/compile.py) wraps the `ModelBuild` this returns in a
`CompiledModel`.

The loop module is compiled kernel by kernel (`kernels.compile_model_module`:
one object file per distinct kernel, compiled in parallel where CPUs are idle,
linked by the JIT), and both the objects and the whole result are kept in the
compile cache (utils/compile_cache.py): a model entry is keyed by the ONNX
model's bytes (or a graph module's IR and a digest of its weights), the options,
the thread count and the target, and holds the loop IR, the ports, the weights
the passes derived and the keys of the objects to link, so a warm compile runs
no pass and no LLVM.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, UnrankedTensorType

from tilecraft.driver.ports import INPUT, OUTPUT, WEIGHT, Port
from tilecraft.pipelines.extra_passes import ExtraPasses, insert_passes
from tilecraft.utils.compile_timing import section
from tilecraft.utils.gc_pause import compiling
from tilecraft.utils.weights import WeightStore, attach, check_store, store_of


def load_model(model, input_shapes: dict | None = None, store: WeightStore | None = None) -> ModuleOp:
    """A graph-level module (its weight store attached), verified, from an ONNX model
    or path, a `.mlir` file, or a module (with `store` if it has none attached)."""
    if isinstance(model, ModuleOp):
        from tilecraft.utils.diagnostics import verify_module

        verify_module(model)
        module = model.clone()  # the caller's module is not rewritten
        store = store if store is not None else store_of(model)
        if store is not None:
            check_store(module, store)  # the caller's arrays: shapes as the module says
            attach(module, store)
        return module
    if isinstance(model, (str, Path)) and str(model).endswith(".mlir"):
        from tilecraft.driver.context import parse_file

        return parse_file(model)
    import onnx

    from tilecraft.frontends.onnx import from_onnx

    if not isinstance(model, (str, Path, onnx.ModelProto)):
        raise TypeError(
            "tilecraft.compile takes an ONNX model (a ModelProto or a path), a .mlir path or a "
            f"graph-level ModuleOp, not {type(model).__name__}"
        )
    module, _ = from_onnx(model, input_shapes=input_shapes)
    return module


def graph_function(module: ModuleOp) -> func.FuncOp:
    """The function a graph-level module computes: `@main`, or its only function."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    if not functions:
        raise ValueError("the module has no function to compile")
    return next((f for f in functions if f.sym_name.data == "main"), functions[0])


def _user_shapes(function: func.FuncOp) -> tuple[list[tuple | None], list[tuple | None]]:
    """The shapes the caller sees: the graph function's argument and result types
    (a size known when it runs: the SymExpr its `?` is named)."""
    from tilecraft.dialects.graph.shapes import shape_of

    def shape(t) -> tuple | None:  # (None: unranked, as the buffer is once inferred)
        return tuple(shape_of(t)) if isinstance(t, TensorType) else None if isinstance(t, UnrankedTensorType) else ()

    ftype = function.function_type
    return [shape(t) for t in ftype.inputs.data], [shape(t) for t in ftype.outputs.data]


def ports_of(main: func.FuncOp, user_inputs, user_outputs) -> list[Port]:
    """The model's signature: one port per argument of the loop-level `main`."""
    from tilecraft.backends.llvm.jit import signatures_of

    module = main.parent_op()
    assert isinstance(module, ModuleOp)
    specs = signatures_of([f for f in module.ops if isinstance(f, func.FuncOp)])[main.sym_name.data]
    ports = []
    inputs, outputs = iter(user_inputs), iter(user_outputs)
    # The outputs are the last arguments (bufferize-graph-function); an empty one
    # is never written, so "written" alone would not find it.
    first_output = len(specs) - len(user_outputs)
    for n, spec in enumerate(specs):
        shape = spec.shape
        if spec.weight is not None:
            ports.append(Port(spec.weight, WEIGHT, shape, spec.dtype, shape))
        elif spec.output or n >= first_output:
            user = next(outputs, shape)
            ports.append(Port(spec.name, OUTPUT, shape, spec.dtype, shape if user is None else user))
        else:
            user = next(inputs, shape)
            ports.append(Port(spec.name, INPUT, shape, spec.dtype, shape if user is None else user))
    return ports


def kernel_calls(main: func.FuncOp) -> list[str]:
    """The kernels `main` calls, in order."""
    return [op.callee.root_reference.data for op in main.walk() if isinstance(op, func.CallOp)]


class _Answered:
    """A tuning context that remembers the configs it gave (workload key -> config)."""

    def __init__(self, lookup):
        self.lookup, self.answered = lookup, {}

    def __call__(self, template: str, params: tuple):
        from tilecraft.topi.tuning import workload_key

        config = self.lookup(template, params)
        if config is not None:
            self.answered[workload_key(template, params)] = config
        return config


def _int_attr(op, key: str) -> int:
    a = op.attributes.get(key)
    return int(a.value.data) if isinstance(a, IntegerAttr) else 0


@dataclass
class ModelBuild:
    """A compiled model's parts: its native entry point and what describes it."""

    entry: Callable  # @main, called with one address per port
    ports: list[Port]
    weights: dict[str, np.ndarray]  # the weight ports' arrays
    entry_name: str
    kernel_calls: list[str]
    arena_bytes: int
    naive_bytes: int
    ir: str  # the loop-level module as text
    module: ModuleOp | Callable[[], ModuleOp]  # or a function that parses `ir`
    num_threads: int
    compile_seconds: float
    passes: list[str]
    owner: object  # the JIT module that keeps the machine code alive
    tuned: dict[str, dict] = field(default_factory=dict)  # workload key -> config used


@compiling
def compile_model(
    model_or_path,
    target: str = "llvm",
    *,
    fuse: bool = True,
    input_shapes: dict | None = None,
    store: WeightStore | None = None,
    num_threads: int | None = None,
    extra_passes: ExtraPasses | None = None,
    schedule_configs=None,
    per_kernel: bool = True,
) -> ModelBuild:
    """What `tilecraft.compile` takes (its options are described there), compiled."""
    from tilecraft.driver.context import make_context
    from tilecraft.pipelines.compile_model import CompileModelPass
    from tilecraft.pipelines.run_stages import run_stages
    from tilecraft.topi.tuning import use_configs
    from tilecraft.utils.compile_cache import open_cache
    from tilecraft.utils.threads import resolve_threads

    if target != "llvm":
        raise ValueError(f"unknown target {target!r}; tilecraft.compile supports 'llvm'")
    threads = resolve_threads(num_threads)
    start = time.perf_counter()
    cache = open_cache() if per_kernel else None
    # What the graph pipeline makes of the model is cached only when nothing
    # outside the model decides it (no passes of the caller's, no tuning context,
    # whether passed here or set around the call with use_configs).
    from tilecraft.topi.tuning import configs_in_use

    cacheable = cache is not None and extra_passes is None and schedule_configs is None and not configs_in_use()
    key, onnx_model = None, None
    if cacheable and store is None and _is_onnx(model_or_path):
        # An ONNX model is keyed by its bytes, so a warm compile skips the import
        # too; its entry then holds every weight the model binds.
        with section("cache key"):
            try:
                onnx_model, key = onnx_model_key(model_or_path, input_shapes, fuse, threads)
            except Exception:  # noqa: BLE001 - unreadable: the import below says why
                onnx_model, key = None, None
        cached = _cached_model(cache, key, None, threads, start) if key is not None else None
        if cached is not None:
            return cached
    with section("load-model"):
        # The caller's model, not the one read above: the importer's diagnostics name the file.
        module = load_model(model_or_path, input_shapes, store)
    name = graph_function(module).sym_name.data
    user_inputs, user_outputs = _user_shapes(graph_function(module))
    source = store_of(module)
    if cacheable and key is None:
        with section("cache key"):
            key = model_key(module, source, fuse, threads)
        cached = _cached_model(cache, key, source, threads, start)
        if cached is not None:
            return cached
    if source is not None:
        attach(module, source.child())  # what the passes add stays with this model
    stages = insert_passes(CompileModelPass(fuse=fuse).stages(), extra_passes)
    ctx = make_context()
    lookup = _Answered(schedule_configs) if schedule_configs is not None else None
    with section("compile-model"), use_configs(lookup) if lookup is not None else contextlib.nullcontext():
        run_stages(stages, ctx, module)
    main = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)

    from tilecraft.driver.kernels import compile_loop_module, compile_model_module

    with section("print"):
        ir = str(module)
    if per_kernel:
        jit, piece_keys = compile_model_module(module, num_threads=threads, cache=cache)
    else:
        jit, piece_keys = compile_loop_module(module, num_threads=threads), []
    ports = ports_of(main, user_inputs, user_outputs)
    store = store_of(module)
    weights = {p.name: store[p.name] for p in ports if p.kind == WEIGHT} if store is not None else {}
    model = ModelBuild(
        jit[name].unchecked,
        ports,
        weights,
        entry_name=name,
        kernel_calls=kernel_calls(main),
        arena_bytes=_int_attr(main, "tc.arena_bytes"),
        naive_bytes=_int_attr(main, "tc.naive_bytes"),
        ir=ir,
        module=module,
        num_threads=threads,
        compile_seconds=time.perf_counter() - start,
        passes=[p.name for p in stages],
        owner=jit,
        tuned=lookup.answered if lookup is not None else {},
    )
    if key is not None and cache is not None:
        with section("cache write"):
            _store_model(cache, key, model, jit, piece_keys, None if onnx_model is not None else source)
    return model


# -- the compile cache's model entries ------------------------------------------------
# An entry holds what a warm compile needs without running a pass: the loop IR
# (parsed only if the model is profiled or saved), the ports, the kernels called,
# the signatures the JIT checks, the cache keys of the objects to link, and the
# weights the pipeline derived (packed, transformed); weights the caller gave are
# taken from the caller's store again (they are part of the key).


def weights_digest(store: WeightStore | None) -> str:
    """A SHA-256 of every array of `store`: names, dtypes, shapes and bytes."""
    import hashlib

    digest = hashlib.sha256()
    if store is None:
        return "no weights"
    arrays = store.arrays
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        digest.update(array.view(np.uint8).reshape(-1).data if array.size else b"")
    return digest.hexdigest()


def _is_onnx(model_or_path) -> bool:
    if isinstance(model_or_path, (str, Path)):
        return str(model_or_path).endswith(".onnx")
    return type(model_or_path).__name__ == "ModelProto"


def onnx_model_key(model_or_path, input_shapes, fuse: bool, threads: int):
    """The ONNX model (loaded, with any external data) and the cache key of its
    compiled model: its content (`model_digest`), the input shapes and the options."""
    import onnx

    from tilecraft.frontends.onnx.skeleton import model_digest

    model = onnx.load(str(model_or_path)) if isinstance(model_or_path, (str, Path)) else model_or_path
    digest = model_digest(model)
    shapes = repr(sorted((k, tuple(v)) for k, v in (input_shapes or {}).items()))
    return model, _key("onnx-model", digest, shapes, fuse, threads)


def model_key(module: ModuleOp, store: WeightStore | None, fuse: bool, threads: int) -> str:
    """The cache key of a graph module's compiled model."""
    return _key("model", str(module), weights_digest(store), fuse, threads)


def _key(kind: str, source: str, weights: str, fuse: bool, threads: int) -> str:
    from tilecraft.backends.llvm.jit import jit_flavour
    from tilecraft.backends.llvm.runtime import default_flavour
    from tilecraft.backends.llvm.target import target_description
    from tilecraft.utils.compile_cache import make_key

    return make_key(
        kind,
        source,
        weights,
        f"fuse={fuse}",
        f"threads={threads}",
        f"runtime={jit_flavour(default_flavour())}",
        target_description(),
    )


def _store_model(cache, key: str, model: ModelBuild, jit, piece_keys: list[str], source) -> None:
    import json

    from tilecraft.backends.llvm.jit import shape_to_json

    given = source.arrays if source is not None else {}
    derived = {
        p.name: np.asarray(model.weights[p.name])
        for p in model.ports
        if p.kind == WEIGHT and (p.name not in given)
    }
    meta = {
        "ir": model.ir,
        "entry": model.entry_name,
        "ports": [p.to_json() for p in model.ports],
        "kernel_calls": model.kernel_calls,
        "arena_bytes": model.arena_bytes,
        "naive_bytes": model.naive_bytes,
        "passes": model.passes,
        "pieces": piece_keys,
        "symbols": jit._symbols,
        "signatures": {
            name: [[a.name, shape_to_json(a.shape), a.dtype.str, a.output, a.weight] for a in f.specs]
            for name, f in jit.functions.items()
        },
    }
    # The derived weights follow the metadata as raw bytes, each at a 64-byte
    # aligned offset, so a warm compile makes arrays of the entry without copies.
    chunks, offset = [], 0
    meta["weights"] = {}
    for name, array in derived.items():
        array = np.ascontiguousarray(array)
        pad = -offset % 64
        chunks += [b"\0" * pad, array.reshape(-1).view(np.uint8)]  # the array's bytes, not a copy
        offset += pad
        meta["weights"][name] = [offset, array.dtype.str, list(array.shape)]
        offset += array.nbytes
    text = json.dumps(meta).encode()
    header = b"%d\n" % len(text) + text
    header += b"\0" * (-len(header) % 64)
    cache.put("model", key, [header, *chunks])


def _cached_model(cache, key: str, source, threads: int, start: float) -> ModelBuild | None:
    """The model of a cache entry, its objects linked; None if anything is missing."""
    import json

    from tilecraft.backends.llvm.jit import ArgSpec, jit_objects, shape_from_json

    with section("cache read"):
        payload = cache.get("model", key)
        if payload is None:
            return None
        try:
            end = bytes(payload[:32]).index(b"\n")
            length = int(bytes(payload[:end]))
            meta = json.loads(bytes(payload[end + 1 : end + 1 + length]))
            start_of_data = end + 1 + length
            start_of_data += -start_of_data % 64
            derived = {
                name: np.frombuffer(
                    payload, np.dtype(dtype), int(np.prod(shape)), start_of_data + offset
                ).reshape(shape)
                for name, (offset, dtype, shape) in meta["weights"].items()
            }
        except (ValueError, TypeError, OSError, KeyError):
            return None  # a damaged entry that passed the checksum: compile again
        objects = [cache.get("object", k) for k in meta["pieces"]]
        if any(o is None for o in objects):
            return None
    signatures = {
        name: [ArgSpec(a, shape_from_json(shape), np.dtype(dtype), output, weight)
               for a, shape, dtype, output, weight in specs]
        for name, specs in meta["signatures"].items()
    }
    ports = [Port.from_json(p) for p in meta["ports"]]
    jit = jit_objects(objects, signatures, symbols=meta["symbols"], num_threads=threads)  # type: ignore[arg-type]
    given = source.arrays if source is not None else {}
    weights: dict[str, np.ndarray] = {}
    for p in ports:
        if p.kind == WEIGHT:
            array = derived[p.name] if p.name in derived else given.get(p.name)
            if array is None:
                return None  # an entry without a weight it needs: compile again
            weights[p.name] = array
    ir = meta["ir"]

    def parse():
        from tilecraft.driver.context import parse_text

        return parse_text(ir)

    entry = meta["entry"]
    return ModelBuild(
        jit[entry].unchecked,
        ports,
        weights,
        entry_name=entry,
        kernel_calls=meta["kernel_calls"],
        arena_bytes=meta["arena_bytes"],
        naive_bytes=meta["naive_bytes"],
        ir=ir,
        module=parse,
        num_threads=threads,
        compile_seconds=time.perf_counter() - start,
        passes=meta["passes"],
        owner=jit,
    )
