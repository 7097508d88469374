"""Every dialect and pass of tilecraft, registered lazily with xDSL's universe.

`tilecraft-opt` (and plain `xdsl-opt`) find these through the `xdsl.universe`
entry point; a module is imported only when its dialect or pass is first used.
"""

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe


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

    def llvmx():
        from tilecraft.backends.llvm.llvmx import LLVMX

        return LLVMX

    return {"graph": graph, "te": te, "sched": sched, "loop": loop, "llvmx": llvmx}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    def convert_te_to_loop():
        from tilecraft.lowering.convert_te_to_loop import ConvertTeToLoopPass

        return ConvertTeToLoopPass

    def convert_loop_to_llvm():
        from tilecraft.lowering.convert_loop_to_llvm import ConvertLoopToLlvmPass

        return ConvertLoopToLlvmPass

    def loop_pass(module: str, cls: str) -> Callable[[], type[ModulePass]]:
        # The loop-level passes of transforms/, one module each.
        def load() -> type[ModulePass]:
            from importlib import import_module

            return getattr(import_module(f"tilecraft.transforms.{module}"), cls)

        return load

    loop_passes = {
        "loop-unroll": loop_pass("loop_unroll", "LoopUnrollPass"),
        "loop-outline-parallel": loop_pass("loop_outline_parallel", "LoopOutlineParallelPass"),
        "loop-vectorize": loop_pass("loop_vectorize", "LoopVectorizePass"),
    }

    def te_inline():
        from tilecraft.transforms.te_inline import TeInlinePass

        return TeInlinePass

    def graph_pass(module: str, cls: str) -> Callable[[], type[ModulePass]]:
        # The graph-level passes of transforms/, one module each.
        def load() -> type[ModulePass]:
            from importlib import import_module

            return getattr(import_module(f"tilecraft.transforms.{module}"), cls)

        return load

    graph_passes = {
        "infer-shapes": graph_pass("infer_shapes", "InferShapesPass"),
        "fold-constants": graph_pass("fold_constants", "FoldConstantsPass"),
        "simplify-inference": graph_pass("simplify_inference", "SimplifyInferencePass"),
        "alter-layout": graph_pass("alter_layout", "AlterLayoutPass"),
        "fuse-ops": graph_pass("fuse_ops", "FuseOpsPass"),
        "plan-memory": graph_pass("plan_memory", "PlanMemoryPass"),
    }

    def loop_to_llvm():
        from tilecraft.lowering.loop_to_llvm import LoopToLlvmPass

        return LoopToLlvmPass

    def convert_graph_to_te():
        from tilecraft.lowering.convert_graph_to_te import ConvertGraphToTePass

        return ConvertGraphToTePass

    return {
        **graph_passes,
        "convert-graph-to-te": convert_graph_to_te,
        "convert-te-to-loop": convert_te_to_loop,
        "convert-loop-to-llvm": convert_loop_to_llvm,
        "loop-to-llvm": loop_to_llvm,
        "te-inline": te_inline,
        **loop_passes,
    }


TILECRAFT_UNIVERSE = Universe(
    all_dialects=get_all_dialects(), all_passes=get_all_passes()
)
