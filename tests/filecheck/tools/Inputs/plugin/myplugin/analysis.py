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
