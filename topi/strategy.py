"""Which topi compute implements each graph op (TVM's op strategy, compute half).

`compute(op, inputs, constants)` reads the op's attributes (ONNX meaning, see
dialects/graph/) and returns the te tensors of its results. `constants[i]` is
the value of operand i when it is a known small constant (a Pow exponent of 2
becomes a multiply). An op without an entry raises `NotImplementedError`; the
caller turns that into a diagnostic at the op.

Plugins add the ops of their own dialects with `register_strategy` (exported as
`tilecraft.register_strategy`), from the module that defines the op, so the strategy
exists whenever the op can.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType

from tilecraft.dialects import graph
from tilecraft.dialects.graph.shapes import shape_of
from tilecraft.frontends import te
from tilecraft.topi import anchors, elementwise, pool, reduce, scatter, transform
from tilecraft.topi.common import broadcast_shape, te_dtype, te_size

Compute = Callable[[graph.GraphOp, list[te.Tensor], list], list[te.Tensor]]


def result_shape(op: graph.GraphOp, n: int = 0) -> tuple[int, ...]:
    t = op.outputs[n].type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def _unary(f) -> Compute:
    return lambda op, xs, cs: [f(xs[0])]


def _binary(f) -> Compute:
    return lambda op, xs, cs: [f(xs[0], xs[1])]


def _clip(op, xs, cs):
    return [elementwise.clip(xs[0], op.min, op.max)]


def _cast(op, xs, cs):
    return [elementwise.cast(xs[0], te_dtype(op.outputs[0].type))]


def _requantize(op, xs, cs):
    return [elementwise.requantize(xs[0], op.shift, te_dtype(op.outputs[0].type))]


def _bitcast(op, xs, cs):
    return [elementwise.bitcast(xs[0], te_dtype(op.outputs[0].type))]


def _pow(op, xs, cs):
    exponent = cs[1]
    scalar = None
    if exponent is not None and np.all(exponent == exponent.flat[0]):
        scalar = float(exponent.flat[0])
        if broadcast_shape(xs[0].shape, xs[1].shape) != xs[0].shape:
            scalar = None  # the exponent also broadcasts x: keep the general path
    return [elementwise.power(xs[0], xs[1], scalar)]


def _reshape(op, xs, cs):
    # a scalar (rank 0) is a one-element tensor in te, as the graph function passes it
    return [transform.reshape(xs[0], _te_shape(op, xs[0]) or (1,))]


def _te_shape(op: graph.GraphOp, x: te.Tensor) -> tuple:
    """The result's shape in te sizes: its `?`s (named by the type) in the te.vars
    the input's shape has (`batch` stays the input's `batch`)."""
    shape = shape_of(op.outputs[0].type)
    if all(isinstance(d, int) for d in shape):
        return tuple(shape)
    names = {d.name: d for d in x.shape if isinstance(d, te.Var)}
    return tuple(te_size(d, names) for d in shape)


def _reduce(f) -> Compute:
    def compute(op, xs, cs):
        axes = op.reduce_axes(len(xs[0].shape))
        return [f(xs[0], axes, op.keepdims)]

    return compute


def _conv2d(op, xs, cs):
    if op.algorithm == "winograd":
        return [anchors.winograd_conv2d_compute(xs[0], xs[1], pads=list(op.pads))]
    out = anchors.conv2d_compute(
        xs[0],
        xs[1],
        xs[2] if len(xs) > 2 else None,
        strides=list(op.strides),
        pads=list(op.pads),
        dilations=list(op.dilations),
        groups=op.groups,
        data_layout=op.data_layout,
        kernel_layout=op.kernel_layout,
        out_layout=op.out_layout,
    )
    return [out]


def _dense(op, xs, cs):
    bias = xs[2] if len(xs) > 2 else None
    return [anchors.dense_compute(xs[0], xs[1], bias, weight_layout=str(op.weight_layout))]


def _pool(f, with_count: bool) -> Compute:
    def compute(op, xs, cs):
        extra = {"count_include_pad": op.count_include_pad} if with_count else {}
        return [
            f(xs[0], list(op.kernel), list(op.strides), list(op.pads), op.ceil_mode, layout=op.layout,
              dilations=list(op.dilations), **extra)
        ]

    return compute


def _layer_norm(op, xs, cs):
    scale = xs[1] if len(xs) > 1 else None
    bias = xs[2] if len(xs) > 2 else None
    return [reduce.layer_norm(xs[0], scale, bias, op.axis, op.epsilon)]


def _slice(op, xs, cs):
    return [transform.strided_slice(xs[0], op.ranges(xs[0].shape))]


def _axis(op, rank: int) -> int:
    return op.axis % rank


COMPUTES: dict[str, Compute] = {
    "graph.relu": _unary(elementwise.relu),
    "graph.sigmoid": _unary(elementwise.sigmoid),
    "graph.tanh": _unary(elementwise.tanh),
    "graph.erf": _unary(elementwise.erf),
    "graph.gelu": lambda op, xs, cs: [elementwise.gelu(xs[0], str(op.approximate))],
    "graph.exp": _unary(elementwise.exp),
    "graph.log": _unary(elementwise.log),
    "graph.sqrt": _unary(elementwise.sqrt),
    "graph.neg": _unary(elementwise.negative),
    "graph.abs": _unary(elementwise.abs),
    "graph.sin": _unary(elementwise.sin),
    "graph.cos": _unary(elementwise.cos),
    "graph.tan": _unary(elementwise.tan),
    "graph.asin": _unary(elementwise.asin),
    "graph.acos": _unary(elementwise.acos),
    "graph.atan": _unary(elementwise.atan),
    "graph.sinh": _unary(elementwise.sinh),
    "graph.cosh": _unary(elementwise.cosh),
    "graph.asinh": _unary(elementwise.asinh),
    "graph.acosh": _unary(elementwise.acosh),
    "graph.atanh": _unary(elementwise.atanh),
    "graph.floor": _unary(elementwise.floor),
    "graph.ceil": _unary(elementwise.ceil),
    "graph.round": _unary(elementwise.round_even),
    "graph.fmod": _binary(elementwise.fmod),
    "graph.clip": _clip,
    "graph.cast": _cast,
    "graph.requantize": _requantize,
    "graph.bitcast": _bitcast,
    "graph.add": _binary(elementwise.add),
    "graph.sub": _binary(elementwise.subtract),
    "graph.mul": _binary(elementwise.multiply),
    "graph.div": _binary(elementwise.divide),
    "graph.pow": _pow,
    "graph.maximum": _binary(elementwise.maximum),
    "graph.minimum": _binary(elementwise.minimum),
    "graph.where": lambda op, xs, cs: [elementwise.where(*xs)],
    "graph.broadcast_to": lambda op, xs, cs: [elementwise.broadcast_to(xs[0], list(op.shape))],
    "graph.less": _binary(lambda a, b: elementwise.compare("less", a, b)),
    "graph.less_equal": _binary(lambda a, b: elementwise.compare("less_equal", a, b)),
    "graph.greater": _binary(lambda a, b: elementwise.compare("greater", a, b)),
    "graph.greater_equal": _binary(lambda a, b: elementwise.compare("greater_equal", a, b)),
    "graph.equal": _binary(lambda a, b: elementwise.compare("equal", a, b)),
    "graph.not_equal": _binary(lambda a, b: elementwise.compare("not_equal", a, b)),
    "graph.bitwise_and": _binary(elementwise.bitwise_and),
    "graph.bitwise_or": _binary(elementwise.bitwise_or),
    "graph.bitwise_xor": _binary(elementwise.bitwise_xor),
    "graph.bitwise_not": _unary(elementwise.bitwise_not),
    "graph.mod": _binary(elementwise.mod),
    "graph.conv2d": _conv2d,
    "graph.winograd_weight": _unary(anchors.winograd_weight_compute),
    "graph.dense": _dense,
    "graph.matmul": _binary(anchors.matmul_compute),
    "graph.max_pool2d": _pool(pool.max_pool, False),
    "graph.avg_pool2d": _pool(pool.avg_pool, True),
    "graph.max_pool_indices": lambda op, xs, cs: [
        pool.max_pool_indices(
            xs[0], list(op.kernel), list(op.strides), list(op.pads), op.ceil_mode, list(op.dilations), op.storage_order
        )
    ],
    "graph.global_avg_pool2d": _unary(reduce.global_avg_pool),
    "graph.reduce_sum": _reduce(reduce.reduce_sum),
    "graph.reduce_mean": _reduce(reduce.reduce_mean),
    "graph.reduce_max": _reduce(reduce.reduce_max),
    "graph.reduce_min": _reduce(reduce.reduce_min),
    "graph.reduce_prod": _reduce(reduce.reduce_prod),
    "graph.cumulative": lambda op, xs, cs: [
        reduce.cumulative(xs[0], op.axis, op.kind, op.exclusive, op.reverse)
    ],
    "graph.gather_elements": lambda op, xs, cs: [
        scatter.gather_elements(xs[0], xs[1], _axis(op, len(xs[0].shape)), _value_names(op))
    ],
    "graph.gather_nd": lambda op, xs, cs: [scatter.gather_nd(xs[0], xs[1], op.batch_dims, _value_names(op))],
    "graph.scatter_elements": lambda op, xs, cs: [
        scatter.scatter_elements(*xs, _axis(op, len(xs[0].shape)), op.reduction, _value_names(op))
    ],
    "graph.scatter_nd": lambda op, xs, cs: [scatter.scatter_nd(*xs, op.reduction, _value_names(op))],
    "graph.softmax": lambda op, xs, cs: [reduce.softmax(xs[0], op.axis)],
    "graph.layer_norm": _layer_norm,
    "graph.batch_norm": lambda op, xs, cs: [reduce.batch_norm(*xs, epsilon=op.epsilon)],
    "graph.pad": lambda op, xs, cs: [transform.pad(xs[0], list(op.pads), op.value)],
    "graph.reshape": _reshape,
    "graph.flatten": _reshape,
    "graph.squeeze": _reshape,
    "graph.unsqueeze": _reshape,
    "graph.transpose": lambda op, xs, cs: [
        transform.transpose(xs[0], op.permutation(len(xs[0].shape)))
    ],
    "graph.concat": lambda op, xs, cs: [transform.concat(xs, _axis(op, len(xs[0].shape)))],
    "graph.split": lambda op, xs, cs: transform.split(xs[0], _axis(op, len(xs[0].shape)), list(op.sizes)),
    "graph.slice": _slice,
    "graph.gather": lambda op, xs, cs: [
        transform.gather(xs[0], xs[1], _axis(op, len(xs[0].shape)), _value_names(op),
                         scalar_ids=not graph.shape_of(op.indices.type))
    ],
    "graph.layout_transform": lambda op, xs, cs: [
        transform.layout_transform(xs[0], op.src, op.dst)
    ],
}

def _value_names(op) -> tuple[str, ...]:
    """The graph's names of an op's result and operands (for run-time messages)."""
    return tuple(v.name_hint or "?" for v in (*op.results, *op.operands))


# Anchors with a kernel-specific schedule (topi/anchors.py); pooling uses the default.
ANCHOR_SCHEDULES = {
    "graph.conv2d": anchors.schedule_conv2d,
    "graph.dense": anchors.schedule_dense,
    "graph.matmul": anchors.schedule_matmul,
}


Schedule = Callable[[te.Schedule, te.Tensor, te.Tensor, list[te.Tensor]], None]


def register_strategy(
    op: str | type[graph.GraphOp],
    compute: Callable | None = None,
    schedule: Schedule | None = None,
    *,
    replace: bool = False,
):
    """Make convert-graph-to-te lower the graph-level op `op` (its name, or its class)
    with `compute(op, inputs, constants)`, which returns the te tensor (or a list, one
    per result) computing the op's results from `inputs`, its operands as te tensors
    (`constants[i]`: operand i's value when it is a small constant, else None).

    Without `schedule` the op's group gets the default schedule (injective ops inline
    into their consumer). With one, the op is an anchor like conv2d: a group whose
    first anchor it is runs `schedule(s, out, anchor, between)` (see `schedule_group`).
    The op's fusion kind comes from its trait (`graph.Injective`, ...), which the op
    declares; the op subclasses `graph.GraphOp` so fuse-ops and convert-graph-to-te see it.

    Registering an op that already has a strategy is an error unless `replace`.
    Without `compute`, returns a decorator: `@register_strategy("mydialect.op")`.
    """
    if isinstance(op, type):
        if not issubclass(op, graph.GraphOp):
            raise TypeError(
                f"register_strategy: {op.__name__} is not a graph.GraphOp; a graph-level "
                "op subclasses it so fuse-ops and convert-graph-to-te see it"
            )
        op = op.name
    if not isinstance(op, str) or "." not in op:
        raise ValueError(f"register_strategy: expected an op name 'dialect.op', got {op!r}")
    if compute is None:

        def decorate(f: Callable) -> Callable:
            register_strategy(op, f, schedule, replace=replace)
            return f

        return decorate
    if not callable(compute) or (schedule is not None and not callable(schedule)):
        raise TypeError(f"register_strategy: the compute and schedule of '{op}' must be callable")
    if op in COMPUTES and not replace:
        raise ValueError(f"register_strategy: '{op}' already has a te strategy (pass replace=True)")
    COMPUTES[op] = compute
    if schedule is not None:
        ANCHOR_SCHEDULES[op] = schedule
    else:
        ANCHOR_SCHEDULES.pop(op, None)
    return None


def compute(op: graph.GraphOp, inputs: Sequence[te.Tensor], constants: Sequence) -> list[te.Tensor]:
    rule = COMPUTES.get(op.name)
    if rule is None:
        raise NotImplementedError(op.name)
    outs = rule(op, list(inputs), list(constants))
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    if not outs or not all(isinstance(t, te.Tensor) for t in outs):
        raise ValueError(f"its te strategy returned {outs!r}, not te tensors")
    if len(outs) != len(op.results):
        raise ValueError(f"its te strategy computes {len(outs)} tensors for {len(op.results)} results")
    return outs


def schedule_group(
    outputs: Sequence[te.Tensor],
    anchor_op: str | None = None,
    anchor: te.Tensor | None = None,
    anchor_stages: Sequence[te.Tensor] = (),
) -> te.Schedule:
    """The schedule of one fused group (the schedule half of the strategy).

    With a conv2d/dense/matmul anchor and one output, the kernel's own schedule runs,
    given the elementwise stages between the anchor and the output to inline (other
    injective stages, such as a transpose feeding a matmul, are inlined here).
    Anything else, or an anchor group of a shape that schedule does not expect
    (several outputs, a reduction after the anchor), gets the default schedule."""
    from tilecraft.topi.schedule import default_schedule, is_reduce, stages

    if anchor is not None and anchor_op in ANCHOR_SCHEDULES and len(outputs) == 1:
        out = outputs[0]
        everything = stages(outputs)
        own = {id(t) for t in anchor_stages}
        after = _readers_of(anchor, everything)
        between = [t for t in everything if id(t) in after and t is not out and id(t) not in own]
        others = [
            t for t in everything if id(t) not in own and id(t) not in after and t is not anchor
        ]
        if (out is anchor or id(out) in after) and not any(is_reduce(t) for t in between + others):
            s = te.create_schedule(out)
            for t in others:
                s[t].compute_inline()
            ANCHOR_SCHEDULES[anchor_op](s, out, anchor, between)
            return s
    return default_schedule(outputs)


def _readers_of(anchor: te.Tensor, everything: Sequence[te.Tensor]) -> set[int]:
    """Ids of the stages that read `anchor`, directly or through other stages."""
    found: set[int] = set()
    for t in everything:  # producers first
        if any(u is anchor or id(u) in found for u in t.op.input_tensors):
            found.add(id(t))
    return found
