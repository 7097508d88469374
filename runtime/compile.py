"""`tilecraft.compile`: a model in, a `CompiledModel` out.

```
ONNX / graph module ──compile-model (pipelines/compile_model.py)──▶ loop module
  ──LLVM (one module, JIT)──▶ @main: one native call per model call
```

The pipeline is the `compile-model` pass, the same one `tilecraft-opt -p
compile-model` runs, so `CompiledModel.ir` is the text that tool prints. The
caller's weight store is never written: the passes get a child of it.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType

from tilecraft.runtime.extension import ExtraPasses, insert_passes
from tilecraft.runtime.model import INPUT, OUTPUT, WEIGHT, CompiledModel, Port
from tilecraft.utils.compile_timing import section
from tilecraft.utils.weights import WeightStore, attach, check_store, store_of


def load_model(model, input_shapes: dict | None = None, store: WeightStore | None = None) -> ModuleOp:
    """A graph-level module (its weight store attached) from an ONNX model or path,
    a `.mlir` file, or a module (with `store` if it has none attached)."""
    if isinstance(model, ModuleOp):
        module = model.clone()  # the caller's module is not rewritten
        store = store if store is not None else store_of(model)
        if store is not None:
            check_store(module, store)  # the caller's arrays: shapes as the module says
            attach(module, store)
        return module
    if isinstance(model, (str, Path)) and str(model).endswith(".mlir"):
        from tilecraft.compiler import parse_file

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


def _user_shapes(function: func.FuncOp) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """The shapes the caller sees: the graph function's argument and result types."""
    def shape(t) -> tuple[int, ...]:
        return tuple(t.get_shape()) if isinstance(t, TensorType) else ()

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
        if spec.weight is not None:
            ports.append(Port(spec.weight, WEIGHT, spec.shape, spec.dtype, spec.shape))
        elif spec.output or n >= first_output:
            ports.append(Port(spec.name, OUTPUT, spec.shape, spec.dtype, next(outputs, spec.shape)))
        else:
            ports.append(Port(spec.name, INPUT, spec.shape, spec.dtype, next(inputs, spec.shape)))
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


def compile(  # noqa: A001 - TVM's and the issue's name
    model_or_path,
    target: str = "llvm",
    *,
    fuse: bool = True,
    input_shapes: dict | None = None,
    store: WeightStore | None = None,
    num_threads: int | None = None,
    extra_passes: ExtraPasses | None = None,
    schedule_configs=None,
    timing: bool = False,
) -> CompiledModel:
    """Compile an ONNX model (a ModelProto or a path), a `.mlir` graph file, or a
    graph-level `ModuleOp` (with its `WeightStore` as `store`, unless one is
    attached to it). `fuse=False` compiles every op as its own kernel;
    `input_shapes` fixes dynamic input dimensions of an ONNX model; `num_threads`
    is how many threads parallel loops use (default: `OMP_NUM_THREADS`, else the
    CPUs this process may run on); `extra_passes={"after:fuse-ops": [MyPass()]}`
    runs passes of one's own at named points of compile-model
    (`runtime/extension.py`); `schedule_configs(template, params) -> config | None`
    is the tuning context the schedules ask (topi/tuning.py; tc.compile's
    `tuning_log` makes one of a log); what it answered for is `model.tuned`.
    `timing=True` prints where the compilation spent its time (each pass of
    compile-model and loop-to-llvm, translation, LLVM) on stderr, as MLIR's
    `-mlir-timing` does; `model.timing` holds it either way (a `Timer`)."""
    from tilecraft.utils.compile_timing import collect_timing, current_timer

    outer = current_timer()
    with collect_timing(outer) if outer is not None else collect_timing() as timer:
        model = _compile(
            model_or_path, target, fuse, input_shapes, store, num_threads, extra_passes, schedule_configs
        )
    model.timing = timer
    if timing:
        import sys

        print(timer.report(), file=sys.stderr)
    return model


def _compile(model_or_path, target, fuse, input_shapes, store, num_threads, extra_passes, schedule_configs):
    from tilecraft.compiler import make_context
    from tilecraft.pipelines.compile_model import CompileModelPass
    from tilecraft.topi.tuning import use_configs
    from tilecraft.utils.diagnostics import verify_module
    from tilecraft.utils.threads import resolve_threads

    if target != "llvm":
        raise ValueError(f"unknown target {target!r}; tilecraft.compile supports 'llvm'")
    threads = resolve_threads(num_threads)
    start = time.perf_counter()
    with section("load-model"):
        module = load_model(model_or_path, input_shapes, store)
    name = graph_function(module).sym_name.data
    user_inputs, user_outputs = _user_shapes(graph_function(module))
    source = store_of(module)
    if source is not None:
        attach(module, source.child())  # what the passes add stays with this model
    verify_module(module)
    stages = insert_passes(CompileModelPass(fuse=fuse).stages(), extra_passes)
    ctx = make_context()
    lookup = _Answered(schedule_configs) if schedule_configs is not None else None
    with section("compile-model"), use_configs(lookup) if lookup is not None else contextlib.nullcontext():
        for stage in stages:
            with section(stage.name):
                stage.apply(ctx, module)
            with section("verify"):
                verify_module(module)
    main = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name)

    from tilecraft.compiler import compile_loop_module

    with section("print"):
        ir = str(module)
    jit = compile_loop_module(module, num_threads=threads)
    ports = ports_of(main, user_inputs, user_outputs)
    store = store_of(module)
    weights = {p.name: store[p.name] for p in ports if p.kind == WEIGHT} if store is not None else {}
    return CompiledModel(
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

