"""The templates of topi's tunable schedules: the kernels tc.compile runs.

Each names a workload by the parameters its topi compute records (so the task a
model extracts and the log record that tunes it share one key), rebuilds that
computation on its own (no fused epilogue: the knobs are those of the anchor and
apply to the fused group alike), and schedules it with topi's own schedule
function, given the config. The knob spaces are topi's (`conv2d_space`,
`gemm_space`): the template only wraps them.

- `conv2d` (topi/conv2d.py): params (data shape, weight shape, strides, pads,
  dilations, groups, data layout, kernel layout, out layout, data dtype, weight
  dtype) — plain, blocked, 1x1, grouped and depthwise convs alike.
- `dense` (topi/dense.py): params (x shape, weight shape, weight layout, dtype).
- `batch_matmul` (graph.matmul): params (a shape, b shape, dtype).
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
        from tilecraft.topi.conv2d import conv2d_info, conv2d_space

        _, _, conv = self._compute(*params)
        return Space(conv2d_space(conv, conv2d_info(conv)))

    def default_config(self, *params) -> dict:
        from tilecraft.topi.conv2d import conv2d_info, default_config

        _, _, conv = self._compute(*params)
        return default_config(conv, conv2d_info(conv))

    def schedule(self, *params, config):
        from tilecraft.frontends import te
        from tilecraft.topi.conv2d import schedule_conv2d
        from tilecraft.topi.tuning import use_configs

        data, weight, conv = self._compute(*params)
        s = te.create_schedule(conv)
        with use_configs(None):  # config None means the default, not a log's pick
            schedule_conv2d(s, conv, conv, (), config=config)
        return s, [data, weight, conv]

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

    def _compute(self, x_shape, w_shape, weight_layout, dtype="float32"):
        from tilecraft.frontends import te
        from tilecraft.topi.dense import dense_compute

        x = te.placeholder(tuple(x_shape), dtype, name="x")
        w = te.placeholder(tuple(w_shape), dtype, name="w")
        return x, w, dense_compute(x, w, None, weight_layout=weight_layout)


class BatchMatmul(_Gemm):
    name = "batch_matmul"

    def _compute(self, a_shape, b_shape, dtype="float32"):
        from tilecraft.frontends import te
        from tilecraft.topi.dense import matmul_compute

        a = te.placeholder(tuple(a_shape), dtype, name="a")
        b = te.placeholder(tuple(b_shape), dtype, name="b")
        return a, b, matmul_compute(a, b)


for _template in (Conv2d(), Dense(), BatchMatmul()):
    register_template(_template)
