"""The analysis `scaled-relus`: how many `myplugin.scaled_relu` ops a model has and
their alphas' sum (registered when the plugin is loaded: see `__init__.py`)."""

from tilecraft.analysis.framework import Analysis, register_analysis


@register_analysis
class ScaledRelus(Analysis):
    name = "scaled-relus"

    def map(self, op, deps):
        if op.name != "myplugin.scaled_relu":
            return None
        return {"scaled_relus": 1, "alpha": op.alpha}


# Analyses whose dependencies cannot be met (tools/plugin-analysis.mlir checks
# the errors): one requires an analysis nobody registered, two require each
# other, one at loop level requires a graph-level one.
@register_analysis
class NeedsMissing(Analysis):
    name = "needs-missing"
    requires = ("no-such-analysis",)


@register_analysis
class CycleA(Analysis):
    name = "cycle-a"
    requires = ("cycle-b",)


@register_analysis
class CycleB(Analysis):
    name = "cycle-b"
    requires = ("cycle-a",)


@register_analysis
class LoopNeedsGraph(Analysis):
    name = "loop-needs-graph"
    level = "loop"
    requires = ("macs",)
