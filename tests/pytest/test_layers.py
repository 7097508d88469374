"""The packages form layers: each imports only its own layer and those below, and
no import cycle joins packages. Every import counts, at module level or inside a
function (a lazy import is still a dependency), and so does an import of the
package root (`import tilecraft`, `from tilecraft import te`): through the root
a function-level `tc.build` depends on everything the Python API does.

The layers, lowest first, are those of docs/design.md: a new package goes into
one, and an import that goes up is a design question, not an entry in a list."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = {"tests", "bench", "examples", "build", "docs"}

# Lowest first. A package (directory) or top-level module of tilecraft, by name;
# "__init__" is the package root.
LAYERS: list[set[str]] = [
    {"utils"},
    {"dialects"},
    {"analysis", "frontends", "backends"},
    {"topi"},
    {"transforms"},
    {"lowering"},
    {"pipelines", "registry"},
    {"driver"},
    {"runtime"},
    {"autotune"},
    # The entry points and the TVM-spelled package.
    {"api", "tools", "__init__", "tasks", "compat"},
]
RANK = {name: n for n, layer in enumerate(LAYERS) for name in layer}

def module_names() -> set[str]:
    """tilecraft's packages and top-level modules."""
    names = {"__init__"}
    for path in ROOT.iterdir():
        if path.name.startswith(".") or path.name in SKIP:
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            names.add(path.name)
        elif path.suffix == ".py" and path.stem != "__init__":
            names.add(path.stem)
    return names


def package_imports() -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> where, for tilecraft's own imports."""
    known = module_names()
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in SKIP or rel.parts[0].startswith("."):
            continue
        source = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for node in ast.walk(ast.parse(path.read_text(), str(rel))):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                parts = node.module.split(".")
                if parts[0] != "tilecraft":
                    continue
                if len(parts) > 1:
                    targets = [parts[1]]
                else:  # from tilecraft import x: a module of the package, or a name of the root's
                    targets = [a.name if a.name in known else "__init__" for a in node.names]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] == "tilecraft":
                        targets.append(parts[1] if len(parts) > 1 else "__init__")
            for target in targets:
                if target != source:
                    edges[(source, target)].append(f"{rel}:{node.lineno}")
    return edges


def test_every_package_has_a_layer():
    assert module_names() - set(RANK) == set(), "place the new package or module in LAYERS"


def test_no_import_goes_up_a_layer():
    upward = [f"{a} imports {b} ({', '.join(where[:3])})" for (a, b), where in sorted(package_imports().items())
              if RANK[b] > RANK[a]]  # fmt: skip
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


def test_no_import_cycle_between_packages():
    """Within a layer too: two packages of one layer do not import each other."""
    edges = package_imports()
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)

    def reaches(start: str, goal: str) -> list[str] | None:
        stack, seen = [(start, [start])], {start}
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph[node]):
                if nxt == goal:
                    return path + [nxt]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
        return None

    cycles = []
    for a, b in sorted(edges):
        back = reaches(b, a)
        if back is not None:
            steps = [a, *back]
            where = "; ".join(f"{x} -> {y} at {edges[(x, y)][0]}" for x, y in zip(steps, steps[1:]))
            cycles.append(where)
    assert not cycles, "import cycles between packages:\n" + "\n".join(sorted(set(cycles)))


def test_the_check_sees_function_level_and_root_imports(tmp_path, monkeypatch):
    """The walk counts what the checks above rely on: an import inside a function
    and an import of the package root."""
    package = tmp_path / "pkg"
    (package / "low").mkdir(parents=True)
    (package / "low" / "__init__.py").write_text("")
    (package / "low" / "m.py").write_text(
        "def f():\n    import tilecraft as tc\n    from tilecraft import te\n    from tilecraft.api import build\n"
    )
    (package / "api.py").write_text("")
    monkeypatch.setitem(globals(), "ROOT", package)
    edges = package_imports()
    assert sorted(edges) == [("low", "__init__"), ("low", "api")]
    assert edges[("low", "__init__")] == ["low/m.py:2", "low/m.py:3"]
