"""ONNX Einsum lowered to graph ops: diagonals (a mask and a sum), sums over letters
no one else needs (`graph.reduce_sum`), and for each pair of operands a batched
`graph.matmul` between transposes and reshapes, which is how BLAS-backed einsums
contract. Operands are combined left to right; each intermediate keeps the letters
the output or a later operand still needs."""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from tilecraft.dialects import graph
from tilecraft.frontends.onnx.importer import ONNX_TYPES, Node, converter


def parse_equation(node: Node, equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """The letters of each operand and of the output, '...' spelled out as capital
    letters (unused by ONNX's lower-case subscripts)."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise node.error(f"equation '{equation}' has {len(terms)} operands, the node {len(ranks)}")
    ellipsis_rank = 0
    for term, rank in zip(terms, ranks):
        if "..." in term:
            ellipsis_rank = max(ellipsis_rank, rank - len(term.replace("...", "")))
    spelled = "".join(chr(ord("A") + i) for i in range(ellipsis_rank))
    out_terms = []
    for term, rank in zip(terms, ranks):
        if "..." in term:
            n = rank - len(term.replace("...", ""))
            term = term.replace("...", spelled[ellipsis_rank - n :])
        if len(term) != rank or not all(c.isalpha() for c in term):
            raise node.error(f"subscripts '{term}' do not fit an operand of rank {rank}")
        out_terms.append(term)
    if arrow:
        out = rhs.replace("...", spelled)
    else:  # implicit output: the ellipsis, then letters used once, in order
        counts = {c: "".join(out_terms).count(c) for c in "".join(out_terms)}
        out = spelled + "".join(sorted(c for c, n in counts.items() if n == 1 and c.islower()))
    if len(set(out)) != len(out) or any(c not in "".join(out_terms) for c in out):
        raise node.error(f"output subscripts '{out}' must be distinct letters of the operands")
    return out_terms, out


class Operand:
    """A value and the letter of each of its axes."""

    def __init__(self, value: SSAValue, letters: str):
        self.value, self.letters = value, letters

    def shape(self) -> tuple[int, ...]:
        return graph.shape_of(self.value.type)


def _dtype(value: SSAValue):
    element = graph.ranked(value.type).get_element_type()
    return next(n for t, n in ONNX_TYPES.values() if t == element)


def diagonals(node: Node, x: Operand) -> Operand:
    """Repeated letters in one operand (x[i, i]) become one axis: the input times an
    identity mask, summed over the second occurrence."""
    while len(set(x.letters)) != len(x.letters):
        letter = next(c for c in x.letters if x.letters.count(c) > 1)
        a = x.letters.index(letter)
        b = x.letters.index(letter, a + 1)
        shape = x.shape()
        mask_shape = [1] * len(shape)
        mask_shape[a], mask_shape[b] = shape[a], shape[b]
        mask = np.eye(shape[a], shape[b], dtype=_dtype(x.value)).reshape(mask_shape)
        masked = node.emit(graph.MulOp, [x.value, node.constant(mask, "einsum_eye")])
        x = Operand(node.emit(graph.ReduceSumOp, [masked], axes=[b], keepdims=False), x.letters[:b] + x.letters[b + 1 :])
    return x


def sum_out(node: Node, x: Operand, needed: set[str]) -> Operand:
    axes = [d for d, c in enumerate(x.letters) if c not in needed]
    if not axes:
        return x
    value = node.emit(graph.ReduceSumOp, [x.value], axes=axes, keepdims=False)
    return Operand(value, "".join(c for c in x.letters if c in needed))


def arrange(node: Node, x: Operand, letters: str) -> Operand:
    if x.letters == letters:
        return x
    perm = [x.letters.index(c) for c in letters]
    return Operand(node.emit(graph.TransposeOp, [x.value], perm=perm), letters)


def reshape(node: Node, x: Operand, shape: list[int]) -> SSAValue:
    return x.value if tuple(shape) == x.shape() else node.emit(graph.ReshapeOp, [x.value], shape=shape)


def contract(node: Node, a: Operand, b: Operand, needed: set[str]) -> Operand:
    """a and b (no repeated letters, nothing to sum alone) as one operand with the
    letters in `needed`: [batch, left, sum] @ [batch, sum, right] as a matmul."""
    batch = [c for c in a.letters if c in b.letters and c in needed]
    summed = [c for c in a.letters if c in b.letters and c not in needed]
    left = [c for c in a.letters if c not in b.letters]
    right = [c for c in b.letters if c not in a.letters]
    size = {c: n for x in (a, b) for c, n in zip(x.letters, x.shape())}
    for c in set(a.letters) & set(b.letters):
        if dict(zip(a.letters, a.shape()))[c] != dict(zip(b.letters, b.shape()))[c]:
            raise node.error(f"subscript '{c}' has two different extents")
    a = arrange(node, a, "".join(batch + left + summed))
    b = arrange(node, b, "".join(batch + summed + right))
    n = lambda letters: math.prod(size[c] for c in letters)  # noqa: E731
    lhs = reshape(node, a, [n(batch), n(left), n(summed)])
    rhs = reshape(node, b, [n(batch), n(summed), n(right)])
    product = Operand(node.emit(graph.MatmulOp, [lhs, rhs]), "")
    letters = batch + left + right
    value = reshape(node, product, [size[c] for c in letters])  # no letters: a scalar
    return Operand(value, "".join(letters))


@converter("Einsum")
def convert_einsum(node: Node):
    values = node.inputs()
    equation = node.attr("equation")
    terms, out = parse_equation(node, equation, [len(graph.shape_of(v.type)) for v in values])
    operands = [Operand(v, t) for v, t in zip(values, terms)]
    for i, x in enumerate(operands):
        later = set(out).union(*(o.letters for j, o in enumerate(operands) if j != i))
        operands[i] = sum_out(node, diagonals(node, x), later)
    result = operands[0]
    for i, x in enumerate(operands[1:], start=1):
        needed = set(out).union(*(o.letters for o in operands[i + 1 :]))
        result = contract(node, result, x, needed)
    result = sum_out(node, result, set(out))
    return [arrange(node, result, out).value]
