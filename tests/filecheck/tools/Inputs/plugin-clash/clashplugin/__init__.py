"""A plugin that claims the dialect name `myplugin` and the pass name `fuse-ops`,
which myplugin and tilecraft define: tilecraft-opt must name both providers."""

from xdsl.ir import Dialect
from xdsl.universe import Universe


def _dialect():
    return Dialect("myplugin", [])


def _pass():
    raise AssertionError("never loaded: the clash is reported first")


UNIVERSE = Universe(all_dialects={"myplugin": _dialect}, all_passes={"fuse-ops": _pass})
