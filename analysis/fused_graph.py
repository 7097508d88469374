"""A picture of a model's fused graph: one node per kernel, as Graphviz `.dot` text.

The graph is the one compile-model's graph stages make, up to and including
fuse-ops (`pipelines.compile_model.fused_module`: shapes inferred, batch norms folded, layouts altered,
constants folded, ops grouped into `graph.fused` kernels). Each group is a node
labelled with its ops and its fusion kind (the largest of its ops' kinds, as
analysis/fusion.py ranks them); an edge goes from the group that produces a value
to each group that reads it, from the model's inputs and to its outputs (weights
and constants, resident, draw no edges). Nodes are coloured by fusion kind, or,
given an accelerator spec, by accelerability: green where the group holds an op of
a chain the accelerator takes (`partition-accel`'s test, as the accelerability
analysis reports it), red where it holds an op with multiply-adds it cannot take,
with the reason in the label and the tooltip, white where it has no multiply-adds
(the CPU runs it, and nothing in it could move).

The verdicts are those of the model as written, before the graph stages rewrite
it; an op that a stage replaces (alter-layout's blocked conv) is followed by its
result's name. A group holding a conv2d, dense or matmul that neither finds is
grey: "not traced".

`write_graph` writes the text as `.dot`, or renders `.svg`/`.png` with Graphviz's
`dot` program when it is on PATH; without it, it writes the `.dot` next to the
requested file and says how to install Graphviz. The text is written here, so
tilecraft needs no Graphviz package.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from tilecraft.analysis.fusion import BROADCAST, ELEMWISE, INJECTIVE, OPAQUE, OUT_FUSABLE, REDUCTION, op_kind
from tilecraft.dialects import graph
from tilecraft.analysis.accel_fit import Chain

KINDS = {ELEMWISE: "elemwise", BROADCAST: "broadcast", INJECTIVE: "injective", REDUCTION: "reduction",
         OUT_FUSABLE: "out-fusable", OPAQUE: "opaque"}  # fmt: skip
KIND_COLOURS = {ELEMWISE: "#c6dbef", BROADCAST: "#9ecae1", INJECTIVE: "#fdd0a2", REDUCTION: "#bcbddc",
                OUT_FUSABLE: "#fdae6b", OPAQUE: "#d9d9d9"}  # fmt: skip
# A group's verdict: ops with multiply-adds the accelerator cannot take (red), all its
# ops moved to the accelerator (green), some (a requantize of a CPU conv fused with
# the cast that starts an accelerator chain: pale green), no multiply-adds to move.
ACCEL_COLOURS = {"not accelerable": "#fc9272", "accelerator": "#74c476", "partly accelerator": "#c7e9c0",
                 "no multiply-adds": "#ffffff", "not traced": "#d9d9d9"}  # fmt: skip
FORMATS = (".dot", ".svg", ".png")
INSTALL = "apt install graphviz, brew install graphviz or conda install graphviz"
GEMM_OPS = (graph.Conv2dOp, graph.DenseOp, graph.MatmulOp)


class GraphRenderError(DiagnosticException):
    """The picture could not be written: a format `dot` cannot make, or `dot` failed."""


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _type_text(value: SSAValue) -> str:
    t = value.type
    if isinstance(t, TensorType):
        return "x".join(str(d) if d >= 0 else "?" for d in t.get_shape()) + f" {t.get_element_type()}"
    return str(t)


def _attributes(**values: str) -> str:
    return ", ".join(f"{key}={_quote(value)}" for key, value in values.items())


class _Verdicts:
    """The accelerability of the ops as written, found again after the stages."""

    def __init__(self, found: Mapping[Operation, Chain | str]):
        self.reason: dict[Operation, str | None] = {}  # ops judged: None where the accelerator takes them
        for op, verdict in found.items():
            if isinstance(verdict, Chain):
                self.reason |= {member: None for member in verdict.ops}
            else:
                self.reason[op] = verdict
        named = {op: op.results[0].name_hint for op in self.reason if op.results and op.results[0].name_hint}
        count = Counter(named.values())
        self.by_name = {name: self.reason[op] for op, name in named.items() if count[name] == 1}

    def of(self, op: Operation) -> tuple[bool, str | None]:
        """(known, reason) of `op`: the same op, else the op whose result had its name."""
        if op in self.reason:
            return True, self.reason[op]
        name = op.results[0].name_hint if op.results else None
        if name in self.by_name and isinstance(op, GEMM_OPS):
            return True, self.by_name[name]
        return False, None

    def group(self, members: list[Operation]) -> tuple[str, list[str]]:
        """The group's verdict (an ACCEL_COLOURS key) and its reasons, `op: reason`."""
        reasons, accelerated, untraced = [], 0, False
        for op in members:
            known, reason = self.of(op)
            if known and reason is not None:
                reasons.append(f"{op.name.removeprefix('graph.')}: {reason}")
            accelerated += known and reason is None
            untraced |= not known and isinstance(op, GEMM_OPS)
        if reasons:
            return "not accelerable", reasons
        if accelerated:
            return ("accelerator" if accelerated == len(members) else "partly accelerator"), []
        return ("not traced" if untraced else "no multiply-adds"), []


def to_dot(module: ModuleOp, verdicts: Mapping[Operation, Chain | str] | None = None) -> str:
    """The fused graph of `module` (after fuse-ops) as Graphviz text, coloured by
    fusion kind, or by the `verdicts` of `accelerability.verdicts` (taken on the
    module before the stages) when given."""
    judged = _Verdicts(verdicts) if verdicts is not None else None
    functions = [f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration]
    function = next((f for f in functions if f.sym_name.data == "main"), functions[0])
    lines = ["digraph fused {", '  graph [rankdir=TB, fontname="Helvetica", fontsize=10];',
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=8, color="#555555"];']  # fmt: skip
    node_of: dict[object, str] = {}
    for n, arg in enumerate(function.body.block.args):
        node_of[arg] = f"in{n}"
        label = f"{arg.name_hint or f'input {n}'}\n{_type_text(arg)}"
        lines.append(f"  in{n} [{_attributes(label=label, shape='ellipse', fillcolor='#ffffff')}];")
    used: dict[str, str] = {}
    for n, op in enumerate(function.body.block.ops):
        if isinstance(op, graph.ConstantOp | graph.WeightOp | func.ReturnOp):
            continue
        node = f"g{n}"
        node_of[op] = node
        members, tooltip = [op], op.name  # (an op outside any group: a call, say)
        if isinstance(op, graph.FusedOp):
            members = [o for o in op.body.block.ops if not isinstance(o, graph.YieldOp)]
            tooltip = op.group_name.data
        kind = max((op_kind(o) for o in members if isinstance(o, graph.GraphOp) and o.results), default=OPAQUE)
        title = ", ".join(o.name.removeprefix("graph.") for o in members)
        label = f"{textwrap.fill(title, 32)}\n{KINDS[kind]}"
        if judged is None:
            colour = KIND_COLOURS[kind]
            used[KINDS[kind]] = colour
        else:
            verdict, reasons = judged.group(members)
            colour = ACCEL_COLOURS[verdict]
            used[verdict] = colour
            label += "\n" + ("\n".join(textwrap.fill(r, 40) for r in reasons) if reasons else verdict)
            tooltip += "".join(f"\n{r}" for r in reasons)
        lines.append(f"  {node} [{_attributes(label=label, tooltip=tooltip, fillcolor=colour)}];")
    for op in function.body.block.ops:
        if op not in node_of and not isinstance(op, func.ReturnOp):
            continue
        target = node_of.get(op, "out")
        drawn = set()
        for value in op.operands:
            source = node_of.get(value.owner if isinstance(value.owner, Operation) else value)
            if source is not None and (source, value) not in drawn:
                drawn.add((source, value))
                lines.append(f"  {source} -> {target} [{_attributes(label=_type_text(value))}];")
    lines.append(f"  out [{_attributes(label='output', shape='ellipse', fillcolor='#ffffff')}];")
    title = "accelerability" if judged is not None else "fusion kind"
    lines.append(f"  subgraph cluster_legend {{ graph [{_attributes(label=title, fontsize='9')}];")
    for n, (name, colour) in enumerate(used.items()):
        lines.append(f"    key{n} [{_attributes(label=name, fillcolor=colour, fontsize='9')}];")
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def check_path(path: str | Path) -> Path:
    """`path` as a Path, if it names a format `write_graph` writes."""
    path = Path(path)
    if path.suffix not in FORMATS:
        raise GraphRenderError(f"{path}: a fused-graph picture is {', '.join(FORMATS)}, not '{path.suffix}'")
    return path


def write_graph(path: str | Path, text: str) -> str | None:
    """Write `text` to `path` (.dot), or render it there (.svg, .png) with `dot`.
    Returns a note when `dot` is missing: the text went to the `.dot` beside `path`."""
    path = check_path(path)
    if path.suffix == ".dot":
        path.write_text(text)
        return None
    dot = shutil.which("dot")
    if dot is None:
        beside = path.with_suffix(".dot")
        beside.write_text(text)
        return (f"Graphviz's `dot` is not installed, so {path} is not drawn: wrote {beside}; install Graphviz "
                f"({INSTALL}) and run `dot -T{path.suffix[1:]} {beside} -o {path}`")  # fmt: skip
    done = subprocess.run([dot, f"-T{path.suffix[1:]}", "-o", str(path)], input=text, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    if done.returncode:
        first = (done.stderr.strip().splitlines() or ["no message"])[0]
        raise GraphRenderError(f"{path}: dot failed ({first})")
    return None
