"""Every dialect and pass of tilecraft, registered lazily with xDSL's universe,
and the plugins that extend it.

`tilecraft-opt` (and plain `xdsl-opt`) find these through the `xdsl.universe`
entry point; a module is imported only when its dialect or pass is first used.

Other installed packages extend tilecraft the same way: each declares a
`Universe` under that entry point (see docs/guide/extending.md).
`providers()` loads every such universe and says where it comes from;
`get_multiverse()` merges them and, unlike xDSL's own merge, reports a name that
two packages define as a `PluginError` naming both, which the tools print as one
line instead of an internal error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import XDSL_UNIVERSE, Universe
from xdsl.utils.exceptions import DiagnosticException


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    def te():
        from tilecraft.dialects.te import TE

        return TE

    def sched():
        from tilecraft.dialects.sched import SCHED

        return SCHED

    def loop():
        from tilecraft.dialects.loop import LOOP

        return LOOP

    def graph():
        from tilecraft.dialects.graph import GRAPH

        return GRAPH

    def accel():
        # The accel dialect's spec and whole-program checks live above the dialects
        # layer (backends/accel/verify.py); importing the backend installs them.
        import tilecraft.backends.accel.program  # noqa: F401
        from tilecraft.dialects.accel import ACCEL

        return ACCEL

    def llvmx():
        from tilecraft.dialects.llvmx import LLVMX

        return LLVMX

    return {"graph": graph, "te": te, "sched": sched, "loop": loop, "llvmx": llvmx, "accel": accel}


def _pass(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    """A lazy factory: `tilecraft.<module>.<cls>`, imported on first use."""

    def load() -> type[ModulePass]:
        from importlib import import_module

        return getattr(import_module(f"tilecraft.{module}"), cls)

    return load


def pass_groups() -> dict[str, dict[str, Callable[[], type[ModulePass]]]]:
    """tilecraft's passes by the level they work at, each group in pipeline order,
    the groups from a model down to machine code: how `tilecraft-opt --help` and the
    reference pages list them."""
    return {
        "pipelines": {
            "compile-model": _pass("pipelines.compile_model", "CompileModelPass"),
            "check-graph-level": _pass("pipelines.check_graph_level", "CheckGraphLevelPass"),
            "loop-to-llvm": _pass("pipelines.loop_to_llvm", "LoopToLlvmPass"),
            "loop-to-accel": _pass("pipelines.loop_to_accel", "LoopToAccelPass"),
        },
        "graph level": {
            "infer-shapes": _pass("transforms.infer_shapes", "InferShapesPass"),
            "fold-constants": _pass("transforms.fold_constants", "FoldConstantsPass"),
            "fold-empty-tensors": _pass("transforms.fold_empty_tensors", "FoldEmptyTensorsPass"),
            "quantize-int8": _pass("transforms.quantize_int8", "QuantizeInt8Pass"),
            "partition-accel": _pass("transforms.partition_accel", "PartitionAccelPass"),
            "alter-layout": _pass("transforms.alter_layout", "AlterLayoutPass"),
            "winograd-conv2d": _pass("transforms.winograd_conv2d", "WinogradConv2dPass"),
            "fuse-ops": _pass("transforms.fuse_ops", "FuseOpsPass"),
            "concat-in-place": _pass("transforms.concat_in_place", "ConcatInPlacePass"),
            "plan-memory": _pass("transforms.plan_memory", "PlanMemoryPass"),
            "fold-constant-kernels": _pass("transforms.fold_constant_kernels", "FoldConstantKernelsPass"),
        },
        "graph to te": {
            "convert-graph-to-te": _pass("lowering.convert_graph_to_te", "ConvertGraphToTePass"),
        },
        "te level": {
            "te-inline": _pass("transforms.te_inline", "TeInlinePass"),
        },
        "te to loop": {
            "convert-te-to-loop": _pass("lowering.convert_te_to_loop", "ConvertTeToLoopPass"),
            "bufferize-graph-function": _pass("lowering.bufferize_graph_function", "BufferizeGraphFunctionPass"),
        },
        "loop level": {
            "loop-partition": _pass("transforms.loop_partition", "LoopPartitionPass"),
            "loop-unroll": _pass("transforms.loop_unroll", "LoopUnrollPass"),
            "loop-outline-parallel": _pass("transforms.loop_outline_parallel", "LoopOutlineParallelPass"),
            "loop-vectorize": _pass("transforms.loop_vectorize", "LoopVectorizePass"),
            "lower-tensor-intrin": _pass("transforms.lower_tensor_intrin", "LowerTensorIntrinPass"),
            "inject-dma": _pass("transforms.inject_dma", "InjectDmaPass"),
            "expand-dma": _pass("transforms.expand_dma", "ExpandDmaPass"),
            "inject-virtual-threads": _pass("transforms.inject_virtual_threads", "InjectVirtualThreadsPass"),
            "instrument-counters": _pass("transforms.instrument_counters", "InstrumentCountersPass"),
            "insert-gpu-barriers": _pass("transforms.insert_gpu_barriers", "InsertGpuBarriersPass"),
            "infer-alignment": _pass("transforms.infer_alignment", "InferAlignmentPass"),
        },
        "loop to llvm": {
            "convert-loop-to-llvm": _pass("lowering.convert_loop_to_llvm", "ConvertLoopToLlvmPass"),
            "convert-loop-to-gpu": _pass("lowering.convert_loop_to_gpu", "ConvertLoopToGpuPass"),
            "convert-gpu-to-nvvm": _pass("lowering.convert_gpu_to_nvvm", "ConvertGpuToNvvmPass"),
        },
        "accelerator": {
            "convert-loop-to-accel": _pass("lowering.convert_loop_to_accel", "ConvertLoopToAccelPass"),
            "insert-dependences": _pass("transforms.insert_dependences", "InsertDependencesPass"),
            "lower-accel-tokens": _pass("transforms.lower_accel_tokens", "LowerAccelTokensPass"),
        },
    }


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass of tilecraft, by name (in `pass_groups()` order)."""
    return {name: factory for group in pass_groups().values() for name, factory in group.items()}


TILECRAFT_UNIVERSE = Universe(
    all_dialects=get_all_dialects(), all_passes=get_all_passes()
)


# -- plugins -------------------------------------------------------------------------

ENTRY_POINT_GROUP = "xdsl.universe"


class PluginError(DiagnosticException):
    """A plugin that does not load, or two that define the same dialect or pass;
    the tools print it as one line (a diagnostic, not an internal error)."""


@dataclass(frozen=True)
class Provider:
    """One `xdsl.universe` entry point and the universe it names."""

    name: str  # the entry point's name, e.g. "tilecraft"
    value: str  # where it points, "module:attribute"
    package: str | None  # the distribution declaring it, "name version"
    universe: Universe

    def describe(self) -> str:
        return _describe(self.name, self.value, self.package)


def _describe(name: str, value: str, package: str | None) -> str:
    """`'myplugin' (package myplugin 0.1.0, myplugin:UNIVERSE)`"""
    return f"'{name}' ({'package ' + package + ', ' if package else ''}{value})"


def providers() -> list[Provider]:
    """Every universe declared through the `xdsl.universe` entry point (xDSL's,
    tilecraft's and plugins'), loaded, sorted by entry-point name."""
    from importlib.metadata import entry_points

    found: dict[str, Provider] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(point, "dist", None)
        package = f"{dist.metadata['Name']} {dist.version}" if dist is not None else None
        where = _describe(point.name, point.value, package)
        try:
            universe = point.load()
        except Exception as e:  # an ImportError, or anything the plugin's import raises
            raise PluginError(
                f"plugin {where} failed to load: {type(e).__name__}: {e}"
            ) from e
        if not isinstance(universe, Universe):
            raise PluginError(
                f"plugin {where} is not an xdsl.universe.Universe "
                f"but a {type(universe).__name__}"
            )
        provider = Provider(point.name, point.value, package, universe)
        first = found.setdefault(point.name, provider)
        if first.universe is not universe:
            raise PluginError(
                f"two plugins have the entry-point name '{point.name}', "
                f"{first.describe()} and {provider.describe()}; rename one of them"
            )
    return sorted(found.values(), key=lambda p: p.name)


def plugins(found: list[Provider] | None = None) -> list[Provider]:
    """The providers other than tilecraft and xDSL themselves."""
    own = (TILECRAFT_UNIVERSE, XDSL_UNIVERSE)
    return [p for p in (providers() if found is None else found) if p.universe not in own]


def check_unique(found: list[Provider]) -> None:
    """Raise `PluginError` if two providers define a dialect, pass or target of one name."""
    for kind in ("dialect", "pass", "target"):
        owner: dict[str, Provider] = {}
        for provider in found:
            for name in _table(provider.universe, kind):
                first = owner.setdefault(name, provider)
                if first is not provider:
                    raise PluginError(
                        f"{kind} '{name}' is defined twice, by {first.describe()} and by "
                        f"{provider.describe()}; uninstall one of them or rename its {kind}"
                    )


def get_multiverse(found: list[Provider] | None = None) -> Universe:
    """All dialects, passes and targets of every provider, merged; `PluginError`
    if two define one name."""
    found = providers() if found is None else found
    check_unique(found)
    merged = Universe()
    for provider in found:
        merged.all_dialects.update(provider.universe.all_dialects)
        merged.all_passes.update(provider.universe.all_passes)
        merged.all_targets.update(provider.universe.all_targets)
    return merged


def _table(universe: Universe, kind: str) -> dict:
    return {
        "dialect": universe.all_dialects,
        "pass": universe.all_passes,
        "target": universe.all_targets,
    }[kind]
