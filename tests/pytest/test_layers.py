"""The packages form layers: no import cycle between them, and the lowest ones
import nothing above them. Every import counts, at module level or inside a
function (a lazy import is still a dependency)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = {"tests", "bench", "examples", "build"}
# What the bottom layers may import (besides themselves and third-party code).
ALLOWED = {
    "utils": set(),
    "dialects": {"utils"},
}


def package_imports() -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> where, for tilecraft's own imports."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in SKIP or rel.parts[0].startswith("."):
            continue
        source = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        for node in ast.walk(ast.parse(path.read_text(), str(rel))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] == "tilecraft" and len(parts) > 1 and parts[1] != source:
                    edges[(source, parts[1])].append(f"{rel}:{node.lineno}")
    return edges


def test_no_import_cycle_between_packages():
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


def test_bottom_layers_import_nothing_above_them():
    bad = [
        f"{a} imports {b} ({', '.join(where[:3])})"
        for (a, b), where in sorted(package_imports().items())
        if a in ALLOWED and b not in ALLOWED[a]
    ]
    assert not bad, "\n".join(bad)
