"""The registries stay honest: every key loads, names what it loads, and every
pass has a FileCheck test named after it (tests/filecheck/**/<pass-name>.mlir)."""

from pathlib import Path

import pytest
from xdsl.dialects import get_all_dialects as xdsl_dialects
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe

from tilecraft import registry
from tilecraft.registry import TILECRAFT_UNIVERSE, get_all_dialects, get_all_passes

FILECHECK_DIR = Path(__file__).resolve().parents[1] / "filecheck"

PASSES = sorted(get_all_passes())
DIALECTS = sorted(get_all_dialects())


def filecheck_tests() -> set[str]:
    # Inputs/ holds files tests read, Output/ lit's temporaries: neither are tests.
    return {
        path.stem
        for path in FILECHECK_DIR.rglob("*.mlir")
        if not {"Inputs", "Output"} & set(path.relative_to(FILECHECK_DIR).parts)
    }


@pytest.mark.parametrize("name", PASSES)
def test_pass_loads_and_is_named_after_its_key(name: str):
    # An ImportError here means the registry names a module that does not exist.
    pass_class = get_all_passes()[name]()
    assert isinstance(pass_class, type) and issubclass(pass_class, ModulePass)
    assert pass_class.name == name


@pytest.mark.parametrize("name", PASSES)
def test_pass_has_a_filecheck_test(name: str):
    assert name in filecheck_tests(), (
        f"pass '{name}' has no FileCheck test: add tests/filecheck/<dir>/{name}.mlir"
    )


@pytest.mark.parametrize("name", DIALECTS)
def test_dialect_is_named_after_its_key(name: str):
    dialect = get_all_dialects()[name]()
    assert isinstance(dialect, Dialect)
    assert dialect.name == name
    for op in dialect.operations:
        assert op.name.startswith(f"{name}."), op.name
    for attr in dialect.attributes:
        assert attr.name.startswith(f"{name}."), attr.name


def test_dialect_names_are_not_xdsls():
    assert not set(xdsl_dialects()) & set(DIALECTS)


def test_registered_with_xdsl():
    """`xdsl-opt` and `tilecraft-opt` find tilecraft through the entry point."""
    multiverse = Universe.get_multiverse()
    assert set(DIALECTS) <= set(multiverse.all_dialects)
    assert set(PASSES) <= set(multiverse.all_passes)


# What tilecraft provides, written out: a pass or dialect that goes missing from
# the registry (a deleted line, a bad merge) fails here, and a new one must be
# added to these lists on purpose.
EXPECTED_PASSES = {
    "alter-layout", "bufferize-graph-function", "check-graph-level", "compile-model", "concat-in-place",
    "convert-graph-to-te", "convert-loop-to-accel", "convert-loop-to-llvm", "convert-te-to-loop",
    "convert-loop-to-gpu", "convert-gpu-to-nvvm", "insert-gpu-barriers", "infer-alignment",
    "expand-dma", "inject-dma", "inject-virtual-threads", "instrument-counters",
    "fold-constant-kernels", "fold-constants", "fold-empty-tensors", "fuse-ops", "infer-shapes", "insert-dependences",
    "loop-outline-parallel", "loop-partition", "loop-to-accel", "loop-to-llvm", "loop-unroll", "loop-vectorize", "lower-accel-tokens",
    "lower-tensor-intrin", "partition-accel", "plan-memory", "quantize-int8", "te-inline", "winograd-conv2d",
}  # fmt: skip
EXPECTED_DIALECTS = {"accel", "graph", "llvmx", "loop", "sched", "te"}


def test_registry_holds_the_expected_passes_and_dialects():
    assert set(PASSES) - EXPECTED_PASSES == set(), "new passes: add them to EXPECTED_PASSES"
    assert EXPECTED_PASSES - set(PASSES) == set(), "passes missing from registry.get_all_passes()"
    assert set(DIALECTS) == EXPECTED_DIALECTS


def test_universe_loads_the_registrys_classes():
    """The entry point's universe holds every expected name, and each of its
    factories loads the very class the registry's does."""
    assert set(TILECRAFT_UNIVERSE.all_passes) == EXPECTED_PASSES
    assert set(TILECRAFT_UNIVERSE.all_dialects) == EXPECTED_DIALECTS
    for name, factory in TILECRAFT_UNIVERSE.all_passes.items():
        assert factory() is get_all_passes()[name](), name
    for name, factory in TILECRAFT_UNIVERSE.all_dialects.items():
        assert factory() is get_all_dialects()[name](), name


def test_providers_are_tilecraft_and_xdsl():
    """What tilecraft-opt's --help groups by; plugins are tested in test_plugins.py."""
    found = {p.name: p for p in registry.providers()}
    assert found["tilecraft"].universe is TILECRAFT_UNIVERSE
    assert found["tilecraft"].value == "tilecraft.registry:TILECRAFT_UNIVERSE"
    assert found["tilecraft"].package.startswith("tilecraft ")
    assert "xdsl" in found
    merged = registry.get_multiverse()
    assert set(DIALECTS) | {"arith", "func"} <= set(merged.all_dialects)
    assert set(PASSES) | {"cse", "canonicalize"} <= set(merged.all_passes)


def test_check_unique_between_given_providers():
    def provider(name: str, **tables) -> registry.Provider:
        return registry.Provider(name, f"{name}:U", None, Universe(**tables))

    fine = [provider("a", all_dialects={"x": None}), provider("b", all_dialects={"y": None}, all_passes={"x": None})]
    registry.check_unique(fine)  # a dialect and a pass may share a name
    clash = [*fine, provider("c", all_passes={"x": None})]
    with pytest.raises(registry.PluginError, match=r"^pass 'x' is defined twice, by 'b' \(b:U\) and by 'c' \(c:U\)"):
        registry.check_unique(clash)
