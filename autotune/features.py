"""Features of a lowered schedule for the cost model, after the TVM paper's loop features.

A candidate is judged by its loop IR (what `tc.lower` prints): for every buffer
access (`memref.load`/`memref.store`) and each of the innermost `LEVELS` loops around
it, innermost first:

- `log2(1 + length)` of the loop;
- `log2(1 + touched)`: the bytes of the buffer the access touches while this loop
  and the loops inside it run (the product of the extents of the loops whose
  variable moves the index, times the element size);
- `log2(1 + reuse)`: iterations of those loops per byte touched (loops that do not
  move the index reuse what is loaded);
- `log2(1 + |stride|)` of the index along this loop, in elements (0: invariant, 1:
  contiguous);
- one-hot of the loop's kind (serial, parallel, vectorized, unrolled).

Each access gives `LEVELS x PER_LEVEL` numbers; the `ACCESSES` accesses executed
most often (by iteration count; stores before loads on ties) are kept in that
order and the rest dropped, missing ones are zeros, and a few whole-function numbers
come first (`log2(1 + total iterations of innermost bodies)`, loop count, accesses
count, the largest parallel extent, the share of the accesses' executions that run
inside a parallel loop, and `log2(1 + copies)` of the most executed access's body
that unrolling makes: the product of its unrolled loops' extents at any depth).
The last two see what the innermost `LEVELS` miss: a conv's parallel row loop when
a padding stage's parallel loop is the largest, an unrolled loop outside them. The vector has a fixed length, `LENGTH`, so
every workload's configs feed one XGBoost model (transfer between workloads).
Indices that are not affine (`analysis.expr`) count as moving with every loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Operation, SSAValue

from tilecraft.analysis.bounds import index_expr
from tilecraft.analysis.expr import Expr
from tilecraft.dialects.loop import ForOp, LoopKind

LEVELS = 5
KINDS = (LoopKind.SERIAL, LoopKind.PARALLEL, LoopKind.VECTORIZED, LoopKind.UNROLLED)
PER_LEVEL = 4 + len(KINDS)
ACCESSES = 6
GLOBAL = 6
LENGTH = GLOBAL + ACCESSES * LEVELS * PER_LEVEL


def _log(x: float) -> float:
    return math.log2(1.0 + max(x, 0.0))


@dataclass
class _Access:
    op: Operation
    loops: list[ForOp]  # outermost first
    iterations: int
    store: bool


def _element_bytes(t: MemRefType) -> int:
    element = t.element_type
    width = getattr(element, "width", None)
    bits = width.data if width is not None else getattr(element, "bitwidth", 32)
    return max(1, bits // 8)


def _accesses(f: func.FuncOp) -> list[_Access]:
    found: list[_Access] = []

    def walk(op: Operation, loops: list[ForOp]) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    if isinstance(inner, ForOp):
                        walk(inner, loops + [inner])
                    elif isinstance(inner, (memref.LoadOp, memref.StoreOp)):
                        count = math.prod(lp.extent for lp in loops) if loops else 1
                        found.append(_Access(inner, loops, count, isinstance(inner, memref.StoreOp)))
                    else:
                        walk(inner, loops)

    walk(f, [])
    return found


def _strides(access: _Access) -> list[int | None]:
    """The flat index's coefficient of each enclosing loop variable (None: not affine)."""
    op = access.op
    ref: SSAValue = op.memref
    t = ref.type
    assert isinstance(t, MemRefType)
    shape = list(t.get_shape())
    env: dict[SSAValue, Expr | None] = {lp.var: Expr.var(lp.var) for lp in access.loops}
    flat = Expr()
    for k, index in enumerate(op.indices):
        e = index_expr(index, env)
        if e is None:
            return [None] * len(access.loops)
        flat = flat + e * math.prod(shape[k + 1 :])
    if any(not isinstance(atom, SSAValue) for atom in flat.terms):
        return [None] * len(access.loops)  # a div/mod of the loops: treat as moving with all
    return [flat.terms.get(lp.var, 0) for lp in access.loops]


def _access_features(access: _Access) -> list[float]:
    strides = _strides(access)
    size = _element_bytes(access.op.memref.type)
    out: list[float] = []
    loops = access.loops
    for level in range(LEVELS):
        k = len(loops) - 1 - level  # innermost first
        if k < 0:
            out += [0.0] * PER_LEVEL
            continue
        inside = range(k, len(loops))
        iterations = math.prod(loops[j].extent for j in inside)
        touched = math.prod(loops[j].extent for j in inside if strides[j] is None or strides[j] != 0) * size
        stride = strides[k]
        kind = loops[k].kind.data
        out += [
            _log(loops[k].extent),
            _log(touched),
            _log(iterations / touched),
            _log(abs(stride)) if stride is not None else _log(loops[k].extent),
            *[1.0 if kind == option else 0.0 for option in KINDS],
        ]
    return out


def features(module: ModuleOp | func.FuncOp) -> np.ndarray:
    """The fixed-length feature vector (float32, `LENGTH`) of a loop-level module
    (all its functions) or function."""
    functions = [module] if isinstance(module, func.FuncOp) else [
        f for f in module.ops if isinstance(f, func.FuncOp) and not f.is_declaration]  # fmt: skip
    accesses = [a for f in functions for a in _accesses(f)]
    loops = [op for f in functions for op in f.walk() if isinstance(op, ForOp)]
    parallel = max((lp.extent for lp in loops if lp.kind.data == LoopKind.PARALLEL), default=0)
    innermost = sum(a.iterations for a in accesses)
    in_parallel = sum(a.iterations for a in accesses if any(lp.kind.data == LoopKind.PARALLEL for lp in a.loops))
    ranked = sorted(accesses, key=lambda a: (-a.iterations, not a.store))[:ACCESSES]
    copies = math.prod(lp.extent for lp in ranked[0].loops if lp.kind.data == LoopKind.UNROLLED) if ranked else 0
    head = [_log(innermost), float(len(loops)), float(len(accesses)), _log(parallel),
            in_parallel / innermost if innermost else 0.0, _log(copies)]  # fmt: skip
    body: list[float] = []
    for a in ranked:
        body += _access_features(a)
    body += [0.0] * (ACCESSES * LEVELS * PER_LEVEL - len(body))
    return np.asarray(head + body, dtype=np.float32)
