"""`tilecraft.lower`, `tilecraft.build` and `tilecraft.compile`: TVM's entry points.

`compile` takes a whole model (see `tilecraft.runtime`); `lower` and `build` a
schedule. Each checks its arguments and hands over to the driver: the te build
path is `driver/te_function.py` (what `lower` prints is what `build` compiles,
the passes `tilecraft-opt` runs), the model compile driver
`driver/compile_model.py`. `build` returns a `Function` (runtime/function.py)
for the CPU, an `AccelFunction` (runtime/accel.py) for the accelerator.

`te.var` sizes: a built function is compiled once for every size (its sizes
are `?`s of the IR, read from the arrays) and `lower` shows that IR; with
`sizes={"n": 64}` it shows the IR for given sizes, said in a first comment line.
A computation that cannot be built for every size yet is compiled per set of
sizes, on first use (driver/te_function.py `TeBuild`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp

from tilecraft.frontends import te

if TYPE_CHECKING:
    from tilecraft.runtime.accel import AccelFunction
    from tilecraft.runtime.cuda_function import CudaFunction
    from tilecraft.runtime.function import Function


def lower_module(s: te.Schedule, args: Sequence, name: str = "main", sizes: dict[int, int] | None = None) -> ModuleOp:
    """The loop-level module of a schedule (te + sched lowered to the loop dialect)."""
    from tilecraft.driver.te_pieces import lower_module as lower_pieces

    return lower_pieces(s, args, name, sizes)


def lower(
    s: te.Schedule,
    args: Sequence,
    name: str = "main",
    binds=None,
    simple_mode: bool = False,
    sizes: dict[str, int] | None = None,
) -> str:
    """The loop-level IR of a schedule, as text (TVM's `tvm.lower(s, args,
    simple_mode=True)`; our loop IR is always the simple form). `te.var` sizes stay
    `?`s, unless specialized by `sizes` (by name; 64 where not given, when the
    computation cannot be built for every size), said in a comment."""
    if binds:
        raise NotImplementedError("tvm.lower(binds=...): buffer binding is not supported by tilecraft")
    from tilecraft.driver.te_function import lower_text

    return lower_text(s, args, name, sizes)


def build(
    s: te.Schedule,
    args: Sequence | None = None,
    target="llvm",
    target_host=None,
    name: str = "main",
    binds=None,
) -> Function | AccelFunction | CudaFunction:
    """A native function computing `args`' outputs: `f(a, b, c)` writes `c` in place.
    TVM's name default (`default_func`) is not used: the function is called `name`."""
    from tilecraft.compat.target import resolve
    from tilecraft.driver.te_function import check_args

    if args is None:
        raise ValueError("tvm.build needs the argument list: tvm.build(s, [A, B, C])")
    if binds:
        raise NotImplementedError("tvm.build(binds=...): buffer binding is not supported by tilecraft")
    target = resolve(target)  # "llvm" or "accel [-spec=FILE] [-force-serial]" (target.py)
    if target_host is not None:
        resolve(target_host)
    if target.kind.name == "accel":
        from tilecraft.runtime.accel import build_accel

        return build_accel(s, check_args(args), name, target.spec, target.serial)
    if target.kind.name == "cuda":
        from tilecraft.runtime.cuda_function import build_cuda

        return build_cuda(s, check_args(args), name, target.arch)
    from tilecraft.runtime.function import Function

    return Function(s, check_args(args), name)


def compile(  # noqa: A001
    model_or_path,
    target: str = "llvm",
    *,
    fuse: bool = True,
    input_shapes=None,
    store=None,
    num_threads=None,
    extra_passes=None,
    tuning_log=None,
    timing: bool = False,
):
    """A whole model (ONNX model or path, `.mlir` graph file, or graph `ModuleOp`)
    compiled for the CPU: `m = tc.compile("model.onnx"); y = m(x)`. It runs the
    `compile-model` pipeline (what `tilecraft-opt -p compile-model` prints is
    `m.ir`) and calls the model as one native function.
    `extra_passes={"after:fuse-ops": [MyPass()]}` inserts passes at named points.
    `tuning_log="tune.jsonl"` applies the best tuned config of each workload the
    log holds (tilecraft-tune, `tilecraft.autotune`); records that are not configs
    of the current templates (an older log) are skipped with a warning.
    `target="accel"` runs a quantized model's (`tc.quantize`) int8 convolutions on the
    accelerator's simulator and the rest on the CPU (runtime/offload.py), each with
    the best config a `tuning_log` (autotune/records.py) holds for its workload.
    `timing=True` prints where the compilation spent its time on stderr (per pass
    and stage, as MLIR's `-mlir-timing`); `m.timing` holds it either way."""
    from tilecraft.compat.target import resolve

    if resolve(target).kind.name == "cuda":
        from tilecraft.utils.unsupported import UnsupportedError

        raise UnsupportedError(
            "tc.compile(target='cuda'): whole models on the GPU are not supported yet; "
            "tc.build(schedule, args, target='cuda') compiles te schedules for it"
        )
    if resolve(target).kind.name == "accel":
        from tilecraft.runtime.offload import compile_offload

        configs = None if tuning_log is None else _log_lookup(tuning_log, "accel", skip_invalid=True)
        return compile_offload(model_or_path, input_shapes=input_shapes, store=store, schedule_configs=configs)
    from tilecraft.runtime import compile as compile_model

    return compile_model(
        model_or_path,
        "llvm",  # (options after the kind, `llvm -mcpu=...`, change nothing: the host CPU)
        fuse=fuse,
        input_shapes=input_shapes,
        store=store,
        num_threads=num_threads,
        extra_passes=extra_passes,
        schedule_configs=None if tuning_log is None else _log_lookup(tuning_log, skip_invalid=True),
        timing=timing,
    )


def _log_lookup(tuning_log, target: str = "llvm", **options):
    from tilecraft.autotune.tasks import LogLookup

    return LogLookup(tuning_log, target, **options)


def analyze(
    model,
    analyses=("op-histogram", "macs", "bytes", "intensity", "memory"),
    *,
    input_shapes=None,
    store=None,
    accel=None,
):
    """What a model (ONNX model or path, `.mlir` graph file, graph `ModuleOp`) costs,
    op by op and in total: `{name: Result}` of the analyses named, or given as
    instances (`Roofline(machine)`). Graph-level analyses (analysis/graph_costs.py)
    see the model as written; loop-level ones (`loop-counts`: analysis/loop_counts.py)
    see the loop program `tilecraft.compile` makes of it, with its tensor
    intrinsics and copies as loops. `tilecraft.analysis.framework` for one's own.
    `accel` (an `AccelSpec`, a spec file or "default") adds the `accelerability`
    analysis for that accelerator (analysis/accelerability.py), after the analyses
    given, so that a `Roofline(machine)` among them gives its CPU times."""
    from tilecraft.analysis.framework import AnalysisManager, get_analysis
    from tilecraft.driver.compile_model import load_model
    from tilecraft.registry import providers

    providers()  # plugins register their analyses as they load
    wanted: list = [analyses] if isinstance(analyses, str) else list(analyses)
    if accel is not None:
        from tilecraft.analysis.accelerability import Accelerability, accel_spec

        wanted.append(Accelerability(accel_spec(accel)))
    levels = [(get_analysis(a) if isinstance(a, str) else type(a)).level for a in wanted]
    modules = {}
    if "graph" in levels:
        modules["graph"] = load_model(model, input_shapes, store)
        _require_graph_level(modules["graph"])
    if "loop" in levels:
        modules["loop"] = loop_module_of(model, input_shapes=input_shapes, store=store)
    manager = AnalysisManager()
    results = [manager.run(a, modules[level]) for a, level in zip(wanted, levels)]  # a name, or an instance
    return {r.analysis: r for r in results}


def _require_graph_level(module: ModuleOp) -> None:
    from xdsl.dialects import func

    from tilecraft.utils.diagnostics import OpError
    from tilecraft.utils.levels import function_level

    for f in module.ops:
        if isinstance(f, func.FuncOp) and (level := function_level(f)[0]) != "graph":
            raise OpError(f, f"@{f.sym_name.data} is {level}-level IR; graph-level analyses read a model "
                          "(tilecraft-analyze --level loop reads loop IR)")


def _lower_level_module(model) -> ModuleOp | None:
    """A `.mlir` file or module of te or loop functions, at loop level (a copy);
    None for a graph-level model."""
    from xdsl.dialects import func

    from tilecraft.driver.context import has_te, lower_to_loops, parse_file
    from tilecraft.utils.levels import function_level

    if isinstance(model, ModuleOp):
        module = model.clone()
    elif isinstance(model, str) and model.endswith(".mlir"):
        module = parse_file(model)
    else:
        return None
    levels = {function_level(f)[0] for f in module.ops if isinstance(f, func.FuncOp)}
    if not levels or "graph" in levels:
        return None
    return lower_to_loops(module) if has_te(module) else module


def loop_module_of(model, *, input_shapes=None, store=None) -> ModuleOp:
    """The loop-level module `tilecraft.compile` runs for `model`, with its tensor
    intrinsics and DMA copies expanded into loops (what loop-level analyses read)."""
    from xdsl.context import Context

    from tilecraft.driver.compile_model import compile_model
    from tilecraft.transforms.expand_dma import ExpandDmaPass
    from tilecraft.transforms.lower_tensor_intrin import LowerTensorIntrinPass

    module = _lower_level_module(model)
    if module is None:
        build = compile_model(model, input_shapes=input_shapes, store=store)
        module = (build.module() if callable(build.module) else build.module).clone()
    LowerTensorIntrinPass(target="llvm").apply(Context(), module)
    ExpandDmaPass().apply(Context(), module)
    return module
