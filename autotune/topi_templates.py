"""The templates of topi's tunable schedules: the kernels tc.compile runs.

Each names a workload by the parameters its topi compute records (so the task a
model extracts and the log record that tunes it share one key), rebuilds that
computation on its own (no fused epilogue: the knobs are those of the anchor and
apply to the fused group alike), and schedules it with topi's own schedule
function, given the config. The knob spaces are topi's (`conv2d_space`,
`gemm_space`): the template only wraps them.

- `conv2d` (topi/conv2d.py): params (data shape, weight shape, strides, pads,
  dilations, groups, data layout, kernel layout, out layout, data dtype, weight
  dtype) — plain, blocked, 1x1, grouped and depthwise convs alike. Where Winograd
  applies, `algorithm` picks the direct or the Winograd schedule and the space holds
  both schedules' knobs, those of the other algorithm at their first values (a
  constrained Space whose `normalize` lets a search step flip the algorithm).
- `dense` (topi/dense.py): params (x shape, weight shape, weight layout, dtype).
- `batch_matmul` (graph.matmul): params (a shape, b shape, dtype).
- `pool2d` (topi/pool.py): params (kind "max"/"avg", input shape, kernel, strides,
  pads, dilations, ceil_mode, count_include_pad, layout, dtype).
- `reduce` (topi/reduce.py): params (kind, input shape, axes, keepdims, dtype):
  sum/mean/max/min/prod, global average pooling (a mean), softmax, layer_norm.

Pooling and reductions have no kernel schedule of their own: the default
schedule of their group (topi/schedule.py) takes their knobs (`reduction_space`:
window order, vector width, parallel, unroll).
"""

from __future__ import annotations

import math

from tilecraft.autotune.explore import Space
from tilecraft.autotune.templates import Template, register_template


class Conv2d(Template):
    name = "conv2d"

    def _compute(self, data_shape, weight_shape, strides, pads, dilations, groups, data_layout, kernel_layout,
                 out_layout, data_dtype="float32", weight_dtype="float32"):  # fmt: skip
        from tilecraft.frontends import te
        from tilecraft.topi.conv2d import conv2d_compute

        data = te.placeholder(tuple(data_shape), data_dtype, name="data")
        weight = te.placeholder(tuple(weight_shape), weight_dtype, name="weight")
        conv = conv2d_compute(data, weight, strides=strides, pads=pads, dilations=dilations, groups=groups,
                              data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout)  # fmt: skip
        return data, weight, conv

    def space(self, *params) -> Space:
        from tilecraft.topi.conv2d import conv2d_config_distinct, conv2d_config_normal, conv2d_info, conv2d_space

        _, _, conv = self._compute(*params)
        knobs = conv2d_space(conv, conv2d_info(conv))
        if len(knobs.get("algorithm", ())) > 1 or (len(knobs.get("row", ())) > 1 and len(knobs.get("order", ())) > 1):
            return Space(knobs, valid=lambda config: conv2d_config_distinct(config, knobs),
                         normalize=lambda config: conv2d_config_normal(config, knobs))  # fmt: skip
        return Space(knobs)

    def default_config(self, *params) -> dict:
        from tilecraft.topi.conv2d import conv2d_info, default_config

        _, _, conv = self._compute(*params)
        return default_config(conv, conv2d_info(conv))

    def schedule(self, *params, config):
        from tilecraft.frontends import te
        from tilecraft.topi.conv2d import schedule_conv2d
        from tilecraft.topi.tuning import use_configs

        data, weight, conv = self._compute(*params)
        if config is not None and config.get("algorithm") == "winograd":
            from tilecraft.topi.conv2d import conv2d_info, conv2d_space
            from tilecraft.topi.tuning import check_config

            check_config(config, conv2d_space(conv, conv2d_info(conv)), conv.name)
            return self._winograd(data, weight, params[3], config)
        s = te.create_schedule(conv)
        with use_configs(None):  # config None means the default, not a log's pick
            schedule_conv2d(s, conv, conv, (), config=config)
        return s, [data, weight, conv]

    def _winograd(self, data, weight, pads, config):
        """The Winograd kernel of the same workload, scheduled with the config's
        Winograd knobs. It takes the transformed weight, as in a compiled model, where
        fold-constants computes it once: measuring the transform with the kernel made
        Winograd look slower than it runs (ResNet-18's 14x14 layer measured 1.30 ms,
        tuned to direct, the model 9% slower tuned)."""
        from tilecraft.frontends import te
        from tilecraft.topi.winograd import from_conv2d_config, schedule_winograd, winograd_conv2d_compute

        KB, CB, _, _, ib, ob = weight.shape
        u = te.placeholder((4, 4, KB, CB, ib, ob), weight.dtype, name="winograd_weight")
        y = winograd_conv2d_compute(data, u, pads)
        s = te.create_schedule(y)
        schedule_winograd(s, y, y, config=from_conv2d_config(config))
        return s, [data, u, y]

    def function_inputs(self, params, config, inputs):
        """A Winograd config's kernel reads the weight transformed (G g G^T)."""
        if config is not None and config.get("algorithm") == "winograd":
            from tilecraft.dialects.graph_reference import winograd_weight

            return [inputs[0], winograd_weight(inputs[1])]
        return inputs

    def weight_inputs(self, params, config) -> tuple[int, ...]:
        """The weight (a Winograd config's: the transformed weight U)."""
        return (1,)

    def flops(self, *params) -> float:
        from tilecraft.topi.conv2d import conv2d_info

        _, _, conv = self._compute(*params)
        info = conv2d_info(conv)
        outputs = math.prod(conv.shape)
        return 2.0 * outputs * (info.in_channels // info.groups) * math.prod(info.kernel)


class _Gemm(Template):
    """dense and batch_matmul share topi's GEMM schedule and its knobs; a subclass
    gives the compute ((input, input, reduction) from the params)."""

    def _compute(self, *params):
        raise NotImplementedError

    def space(self, *params) -> Space:
        from tilecraft.topi.dense import gemm_space

        return Space(gemm_space(self._compute(*params)[2]))

    def default_config(self, *params) -> dict:
        from tilecraft.topi.dense import default_gemm_config

        return default_gemm_config(self._compute(*params)[2])

    def schedule(self, *params, config):
        from tilecraft.frontends import te
        from tilecraft.topi.dense import schedule_dense
        from tilecraft.topi.tuning import use_configs

        a, b, red = self._compute(*params)
        s = te.create_schedule(red)
        with use_configs(None):  # config None means the default, not a log's pick
            schedule_dense(s, red, red, (), config=config)
        return s, [a, b, red]

    def flops(self, *params) -> float:
        a, _, red = self._compute(*params)
        return 2.0 * math.prod(red.shape) * a.shape[-1]


class Dense(_Gemm):
    name = "dense"

    def weight_inputs(self, params, config) -> tuple[int, ...]:
        return (1,)

    def _compute(self, x_shape, w_shape, weight_layout, dtype="float32"):
        from tilecraft.frontends import te
        from tilecraft.topi.dense import dense_compute

        x = te.placeholder(tuple(x_shape), dtype, name="x")
        w = te.placeholder(tuple(w_shape), dtype, name="w")
        return x, w, dense_compute(x, w, None, weight_layout=weight_layout)


class BatchMatmul(_Gemm):
    """Both operands are computed by the model (attention's Q K^T and P V): in cache
    when it runs, so no weight inputs (measured hot)."""

    name = "batch_matmul"

    def _compute(self, a_shape, b_shape, dtype="float32"):
        from tilecraft.frontends import te
        from tilecraft.topi.dense import matmul_compute

        a = te.placeholder(tuple(a_shape), dtype, name="a")
        b = te.placeholder(tuple(b_shape), dtype, name="b")
        return a, b, matmul_compute(a, b)


for _template in (Conv2d(), Dense(), BatchMatmul()):
    register_template(_template)


class _Reduction(Template):
    """Pooling and reductions share the reduction knobs (`reduction_space`,
    topi/reduce.py) and topi's default schedule of their group (topi/schedule.py);
    a subclass rebuilds the op from its params (`_compute`: inputs and output)."""

    def _compute(self, *params):
        raise NotImplementedError

    def _tuned(self, *params):
        """The inputs, the output, and the tagged reduction stage the knobs are of."""
        from tilecraft.topi.schedule import tunable_stages, stages

        *inputs, out = self._compute(*params)
        _, tuned = tunable_stages(stages([out]))
        return inputs, out, tuned[0]

    def space(self, *params) -> Space:
        from tilecraft.topi.reduce import reduction_space

        red = self._tuned(*params)[2]
        knobs = reduction_space(red)
        if len(knobs["order"]) == 1:
            return Space(knobs)
        # A vector as wide as the innermost axis leaves no window inside it to move:
        # `order` 1 would schedule what 0 does (the schedule takes either).
        extent = red.shape[-1]
        return Space(knobs, valid=lambda config: not config["order"] or config["vector"] < extent)

    def default_config(self, *params) -> dict:
        from tilecraft.topi.schedule import default_knobs

        _, out, red = self._tuned(*params)
        knobs = default_knobs([out])
        return {name: knobs[name] for name in self.space(*params).knobs}

    def schedule(self, *params, config):
        from tilecraft.topi.schedule import default_schedule
        from tilecraft.topi.tuning import use_configs

        inputs, out, _ = self._tuned(*params)
        with use_configs(None):  # config None means the default, not a log's pick
            s = default_schedule([out], config=config)
        return s, [*inputs, out]


class Pool2d(_Reduction):
    """Max and average pooling (topi/pool.py): params (kind "max" or "avg", input
    shape, kernel, strides, pads, dilations, ceil_mode, count_include_pad, layout,
    dtype). The figure is window positions visited per second."""

    name = "pool2d"

    def _compute(self, kind, shape, kernel, strides, pads, dilations, ceil_mode, count_include_pad, layout,
                 dtype="float32"):  # fmt: skip
        from tilecraft.frontends import te
        from tilecraft.topi.pool import avg_pool, max_pool

        x = te.placeholder(tuple(shape), dtype, name="x")
        if kind == "max":
            return x, max_pool(x, kernel, strides, pads, bool(ceil_mode), layout, dilations)
        return x, avg_pool(x, kernel, strides, pads, bool(ceil_mode), bool(count_include_pad), layout, dilations)

    def flops(self, kind, shape, kernel, *params) -> float:
        _, out = self._compute(kind, shape, kernel, *params)
        return float(math.prod(out.shape) * math.prod(kernel))


class Reduce(_Reduction):
    """Reductions (topi/reduce.py): params (kind, input shape, axes, keepdims,
    dtype), kind sum, mean, max, min, prod (global average pooling is a mean over
    H and W), softmax (axes: its one axis) or layer_norm (axes: from its axis on;
    rebuilt with scale and bias, which do not change its schedule). The figure is
    input elements reduced per second, per reduction stage."""

    name = "reduce"

    def _compute(self, kind, shape, axes, keepdims, dtype="float32"):
        from tilecraft.frontends import te
        from tilecraft.topi import reduce

        x = te.placeholder(tuple(shape), dtype, name="x")
        if kind == "softmax":
            (axis,) = axes
            return x, reduce.softmax(x, axis)
        if kind == "layer_norm":
            row = tuple(shape[axes[0] :])
            scale = te.placeholder(row, dtype, name="scale")
            bias = te.placeholder(row, dtype, name="bias")
            return x, scale, bias, reduce.layer_norm(x, scale, bias, axes[0])
        op = {"sum": reduce.reduce_sum, "mean": reduce.reduce_mean, "max": reduce.reduce_max,
              "min": reduce.reduce_min, "prod": reduce.reduce_prod}[kind]  # fmt: skip
        return x, op(x, axes, bool(keepdims))

    def flops(self, kind, shape, *params) -> float:
        stages = 2 if kind in ("softmax", "layer_norm") else 1
        return float(math.prod(shape) * stages)


for _template in (Pool2d(), Reduce()):
    register_template(_template)
