"""The graph ops' traits: the fusion kinds `fuse-ops` reads (`Injective`, `Broadcast`,
`Reduction`, `ComplexOutFusable`, `Opaque`) and the hooks of xDSL's canonicalize
and folding (`GraphCanonicalization`, `GraphFolder`, constant materialization).
"""

from __future__ import annotations

from typing import ClassVar
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Attribute, Operation
from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    HasFolder,
    OpTrait,
)

__all__ = [
    "FusionKind", "Injective", "Broadcast", "Reduction", "ComplexOutFusable", "Opaque", "fusion_kind",
    "GraphCanonicalization", "GraphFolder", "GraphConstantMaterialization",
]  # fmt: skip


# -- fusion kinds ---------------------------------------------------------------


class FusionKind(OpTrait):
    """How an op may fuse (TVM's OpPatternKind); `RANK` orders them like TVM's enum."""

    RANK: ClassVar[int] = 8


class Injective(FusionKind):
    """Each output element depends on one input element per input (elementwise,
    reshape, transpose, pad, slice, gather...)."""

    RANK = 2


class Broadcast(FusionKind):
    """Elementwise over operands broadcast to a common shape."""

    RANK = 1


class Reduction(FusionKind):
    """Combines input elements along axes; takes injective producers."""

    RANK = 3


class ComplexOutFusable(FusionKind):
    """An anchor (conv2d, dense, matmul, pooling) whose elementwise consumers fuse in."""

    RANK = 4


class Opaque(FusionKind):
    """Runs alone (softmax, layer_norm, batch_norm before simplification)."""

    RANK = 8


def fusion_kind(op: Operation) -> type[FusionKind] | None:
    for kind in (Broadcast, Injective, Reduction, ComplexOutFusable, Opaque):
        if op.has_trait(kind):
            return kind
    return None


# -- canonicalization and folding --------------------------------------------------
# The pattern and folder bodies compute with numpy (the ops' meaning,
# graph_reference.py) and the weight store; they live in modules of their own
# beside this one (graph_canonicalization.py, graph_folders.py), imported when
# `canonicalize` first asks for them, not when this dialect loads.


class GraphCanonicalization(HasCanonicalizationPatternsTrait):
    """Identity removal and batch_norm folding, run by xDSL's `canonicalize`."""

    def get_patterns(self, op: type[Operation]):
        from tilecraft.dialects.graph_canonicalization import patterns_for

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls):
        from tilecraft.dialects.graph_canonicalization import all_patterns

        return all_patterns()


class GraphFolder(HasFolder):
    """An op on constants and weights folds to the values it computes."""

    @classmethod
    def fold(cls, op: Operation):
        from tilecraft.dialects.graph_folders import fold

        return fold(op)


class GraphConstantMaterialization(ConstantMaterializationInterface):
    """Folded values become `graph.constant`s."""

    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation | None:
        from tilecraft.dialects.graph.structure import ConstantOp  # (structure's ops carry these traits)

        if isinstance(value, DenseIntOrFPElementsAttr) and value.type == type:
            return ConstantOp(value)
        return None
