"""Analyses as map/reduce descriptions, run by a manager that orders and caches them.

An analysis is a description with parameters, apart from its results: `map`
visits one op of the level it names (graph, or loop) and returns its facts about
it, or None where the op is not one it describes; `reduce` sums the facts up.
One instance runs on any number of modules: `AnalysisManager.run` returns a
`Result`, which the instance never keeps.

Dependencies are declared (`requires = ("macs", "bytes")`) and given to `map` and
`reduce` as the results of those analyses on the same module. The manager runs
them first, caches every result per module, and drops the cached results a pass
does not preserve (`apply`: a pass names what it keeps in `preserved_analyses`, as
MLIR's `markAnalysesPreserved`). A cycle or a dependency that is not registered is
an `AnalysisError` naming both analyses. `annotate` attaches a result's facts to
its ops as `tc.<fact>` attributes (`tilecraft-opt --annotate=macs,bytes`).

```python
class CountAdds(Analysis):
    name = "adds"
    level = "graph"

    def map(self, op, deps):
        return {"adds": 1} if op.name == "graph.add" else None

    def reduce(self, facts, deps):
        return {"adds": sum(f.values["adds"] for f in facts)}

register_analysis(CountAdds)
```
"""

from __future__ import annotations

import difflib
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, TypeVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, StringAttr, f64, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

LEVELS = ("graph", "loop")


class AnalysisError(Exception):
    """An analysis that cannot run: an unknown name, a cycle, a missing dependency."""


class UnknownSize(AnalysisError):
    """A size an analysis cannot count with (a symbolic dimension): raised by `map`,
    the op is reported as unknown with the message; raised by a whole-module
    step, the analysis fails with it."""


@dataclass
class OpFacts:
    """What an analysis found about one op."""

    op: Operation
    label: str  # a function's name; an op's result name where it has one, else the op's name and position
    values: dict[str, object]


@dataclass
class Result:
    """One analysis of one module: its facts per op and their summary."""

    analysis: str
    ops: list[OpFacts]
    totals: dict[str, object]
    unknown: list[str] = field(default_factory=list)  # ops it could not describe: labels and why
    _by_op: dict[Operation, OpFacts] | None = field(default=None, repr=False, compare=False)

    def by_op(self) -> dict[Operation, OpFacts]:
        """The facts by op (made once: analyses that require this one ask per op)."""
        if self._by_op is None or len(self._by_op) != len(self.ops):
            self._by_op = {f.op: f for f in self.ops}
        return self._by_op


class Analysis:
    """A map/reduce analysis; subclasses set `name`, `level`, `requires` and `map`."""

    name: ClassVar[str] = ""
    level: ClassVar[str] = "graph"
    requires: ClassVar[tuple[str, ...]] = ()

    def map(self, op: Operation, deps: Mapping[str, Result]) -> dict[str, object] | None:
        raise NotImplementedError

    def reduce(self, facts: Sequence[OpFacts], deps: Mapping[str, Result]) -> dict[str, object]:
        """The totals: by default the sum of every numeric fact."""
        totals: dict[str, object] = {}
        for f in facts:
            for key, value in f.values.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    total = totals.get(key, 0)
                    assert isinstance(total, (int, float))
                    totals[key] = total + value
        return totals

    def ops(self, module: ModuleOp) -> Iterable[Operation]:
        """The ops `map` visits: those of the functions' bodies (a fused group's too)."""
        for f in module.ops:
            if isinstance(f, func.FuncOp) and not f.is_declaration:
                for op in f.body.walk():
                    if op is not f:
                        yield op

    def run(self, module: ModuleOp, deps: Mapping[str, Result]) -> Result:
        facts, unknown = [], []
        for n, op in enumerate(self.ops(module)):
            try:
                values = self.map(op, deps)
            except UnknownSize as e:
                values = {"unknown": str(e)}
            if values is None:
                continue
            if isinstance(op, func.FuncOp):
                label = op.sym_name.data  # (a loop-level analysis's kernel)
            else:
                label = op.results[0].name_hint if op.results and op.results[0].name_hint else f"{op.name}#{n}"
            facts.append(OpFacts(op, label, values))
            if values.get("unknown"):
                unknown.append(f"{label} ({op.name}): {values['unknown']}")
        return Result(self.name, facts, self.reduce(facts, deps), unknown)


_ANALYSES: dict[str, type[Analysis]] = {}
_A = TypeVar("_A", bound=type[Analysis])


def register_analysis(cls: _A) -> _A:
    """Make `cls` runnable by its name (`tilecraft-analyze --analysis NAME`)."""
    if not cls.name or cls.level not in LEVELS:
        raise AnalysisError(f"{cls.__name__} needs a name and a level ({', '.join(LEVELS)})")
    _ANALYSES[cls.name] = cls
    return cls


def registered_analyses() -> dict[str, type[Analysis]]:
    """Every analysis by name: tilecraft's, and those of the plugins loaded (a plugin
    registers its analyses when its `xdsl.universe` entry point is loaded, which
    `tc.analyze` and the tools do first)."""
    from tilecraft.analysis import accelerability, cost_model, graph_costs, loop_counts, memory_plan  # noqa: F401 - registers the built-in ones

    return dict(_ANALYSES)


def get_analysis(name: str) -> type[Analysis]:
    known = registered_analyses()
    if name not in known:
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise AnalysisError(f"unknown analysis '{name}'{hint} (known: {', '.join(sorted(known))})")
    return known[name]


class AnalysisManager:
    """Runs analyses in dependency order and caches each result per module."""

    def __init__(self) -> None:
        self._cache: weakref.WeakKeyDictionary[ModuleOp, dict[str, Result]] = weakref.WeakKeyDictionary()

    def run(self, analysis: str | Analysis, module: ModuleOp) -> Result:
        instance = get_analysis(analysis)() if isinstance(analysis, str) else analysis
        cached = self._cache.setdefault(module, {})
        for name in self.order(instance):
            if name == instance.name and not isinstance(analysis, str):
                current = instance  # (an instance given with its own parameters)
            elif name in cached:
                continue
            else:
                current = get_analysis(name)()
            cached[name] = current.run(module, {d: cached[d] for d in current.requires})
        return cached[instance.name]

    def order(self, analysis: Analysis) -> list[str]:
        """`analysis` and what it requires, dependencies first."""
        done: list[str] = []

        def visit(cls: type[Analysis], path: list[str]) -> None:
            for dep in cls.requires:
                if dep in path:
                    raise AnalysisError(f"analyses '{cls.name}' and '{dep}' require each other (a cycle)")
                if dep not in registered_analyses():
                    raise AnalysisError(f"analysis '{cls.name}' requires '{dep}', which is not registered")
                if get_analysis(dep).level != cls.level:
                    raise AnalysisError(f"analysis '{cls.name}' ({cls.level} level) requires '{dep}', "
                                        f"which is a {get_analysis(dep).level}-level analysis")  # fmt: skip
                visit(get_analysis(dep), [*path, dep])
            if cls.name not in done:
                done.append(cls.name)

        visit(type(analysis), [analysis.name])
        return done

    def invalidate(self, module: ModuleOp, preserved: Iterable[str] = ()) -> None:
        """After a pass changed `module`: keep only the results it preserves."""
        keep = set(preserved)
        cached = self._cache.get(module, {})
        for name in [n for n in cached if n not in keep]:
            del cached[name]

    def apply(self, pass_: ModulePass, ctx: Context, module: ModuleOp) -> None:
        """Run `pass_` on `module`, then drop the results it does not preserve: those
        its class names in `preserved_analyses` (none by default)."""
        pass_.apply(ctx, module)
        self.invalidate(module, getattr(pass_, "preserved_analyses", ()))


def annotate(result: Result) -> None:
    """Attach `result`'s facts to the ops they describe, as discardable attributes
    `tc.<fact>` (integers as i64, other numbers as f64, an unknown op's reason as a
    string), so that the IR text shows them."""
    for facts in result.ops:
        for key, value in facts.values.items():
            if isinstance(value, bool) or value is None:
                continue
            if isinstance(value, int):
                facts.op.attributes[f"tc.{key}"] = IntegerAttr(value, i64)
            elif isinstance(value, float):
                facts.op.attributes[f"tc.{key}"] = FloatAttr(value, f64)
            elif key == "unknown":
                facts.op.attributes["tc.unknown"] = StringAttr(str(value))
