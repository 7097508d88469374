"""Model-zoo CNNs built with onnx.helper, and the registry of networks benchmarks run.

Each builder takes `size` (input height and width, default 224) and `batch`, uses
fixed seeds and random weights scaled so activations neither vanish nor saturate
(He-scaled convs, batch_norm with plausible statistics), and returns an
onnx.ModelProto with one input "input" [batch, 3, size, size] and one output
"output" [batch, 1000]:

- `resnet50`: torchvision's ResNet-50 (v1.5: the stride on the 3x3 conv of the
  bottleneck); stages of 3, 4, 6, 3 bottlenecks (1x1, 3x3, 1x1 x4), 1x1/s
  downsample convs; global average pool, fc 1000.
- `mobilenet_v2`: MobileNet-v2 width 1.0: inverted residuals (1x1 expand x6,
  depthwise 3x3, 1x1 linear projection; residual add where shapes allow), ReLU6 as
  Clip; channels 16, 24, 32, 64, 96, 160, 320, then 1x1 to 1280.
- `shufflenet_v2`: ShuffleNet-v2 x1.0: stem 3x3/2 conv (24) and max pool, stages of
  4, 8, 4 units (116, 232, 464 channels), conv 1x1 to 1024. A stride-1 unit splits
  the channels in half (Split), runs the second half through 1x1, depthwise 3x3 and
  1x1 convs, Concats it with the first half; a stride-2 unit runs both branches
  (depthwise 3x3/2 + 1x1; 1x1 + depthwise 3x3/2 + 1x1) on the whole input. Both end
  in a channel shuffle with 2 groups: Reshape [N, 2, C/2, H, W], Transpose
  (0, 2, 1, 3, 4), Reshape [N, C, H, W].
- `squeezenet_1_1`: SqueezeNet 1.1: conv 3x3/2 (64), max pools 3x3/2, eight fire
  modules (squeeze 1x1, expand 1x1 and expand 3x3 Concat'ed), conv 1x1 to 1000
  classes, ReLU, global average pool (its output is the logits).
- `densenet_blocks`: DenseNet-121: stem 7x7/2 conv and max pool, dense blocks of 6,
  12, 24, 16 layers (batch_norm, relu, conv 1x1 to 128, batch_norm, relu, conv 3x3
  to 32, Concat'ed onto the block's input), transitions (batch_norm, relu, conv 1x1
  halving the channels, average pool 2x2/2); final batch_norm, relu, global
  average pool, fc 1000.

`NETWORKS = {name: (builder, input shape at size 224, batch 1)}` lists these five
and bench/models.py's ResNet-18 and BERT layer (seq 128, hidden 768; its builder
ignores `size`, and takes `batch` 1 only). Imported by bench/models.py
(`--models nets`) and bench/tuning.py.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import onnx
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import GraphBuilder, _value, bert_layer, resnet18  # noqa: E402  (bench/models.py)


def _out(size: int, k: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - k) // stride + 1


class CnnBuilder(GraphBuilder):
    """GraphBuilder with conv / batch_norm / activation helpers for CNNs."""

    def conv(self, x, cin, cout, k, stride=1, pad=None, group=1, bias=False, gain=2.0):
        pad = k // 2 if pad is None else pad
        fan_in = cin // group * k * k
        w = self.rng.standard_normal((cout, cin // group, k, k)) * math.sqrt(gain / fan_in)
        inputs = [x, self.const("conv_w", w.astype(np.float32))]
        if bias:
            inputs.append(self.const("conv_b", (0.05 * self.rng.standard_normal(cout)).astype(np.float32)))
        return self.node("Conv", inputs, "conv", kernel_shape=[k, k], strides=[stride, stride],
                         pads=[pad] * 4, group=group)  # fmt: skip

    def batch_norm(self, x, c):
        scale = self.const("bn_scale", (1 + 0.1 * self.rng.standard_normal(c)).astype(np.float32))
        shift = self.const("bn_bias", (0.1 * self.rng.standard_normal(c)).astype(np.float32))
        mean = self.const("bn_mean", (0.1 * self.rng.standard_normal(c)).astype(np.float32))
        var = self.const("bn_var", (1 + 0.1 * self.rng.random(c)).astype(np.float32))
        return self.node("BatchNormalization", [x, scale, shift, mean, var], "bn", epsilon=1e-5)

    def act(self, x, kind):
        if kind == "relu":
            return self.node("Relu", [x], "relu")
        if kind == "relu6":
            if not hasattr(self, "_clip"):
                self._clip = (self.const("zero", np.array(0.0, np.float32)),
                              self.const("six", np.array(6.0, np.float32)))  # fmt: skip
            return self.node("Clip", [x, *self._clip], "relu6")
        return x

    def conv_bn(self, x, cin, cout, k, stride=1, group=1, act="relu"):
        # A linear (no activation) output gets gain 1: its variance stays that of x.
        y = self.conv(x, cin, cout, k, stride, group=group, gain=2.0 if act else 1.0)
        return self.act(self.batch_norm(y, cout), act)

    def head(self, x, c, classes=1000):
        """Global average pool, flatten, fc to `classes`: the "output" value."""
        x = self.node("Flatten", [self.node("GlobalAveragePool", [x], "avgpool")], "flatten", axis=1)
        w = self.rng.standard_normal((classes, c)) * math.sqrt(1.0 / c)
        b = np.zeros(classes, np.float32)
        self.nodes.append(helper.make_node("Gemm", [x, self.const("fc_w", w.astype(np.float32)),
                                                    self.const("fc_b", b)], ["output"], transB=1))  # fmt: skip


def _finish(g: GraphBuilder, name: str, batch: int, size: int) -> onnx.ModelProto:
    return g.model(name, [_value("input", [batch, 3, size, size])], [_value("output", [batch, 1000])])


def resnet50(size: int = 224, batch: int = 1, seed: int = 10) -> onnx.ModelProto:
    g = CnnBuilder(seed)

    def bottleneck(x, cin, width, stride):
        cout = 4 * width
        y = g.conv_bn(x, cin, width, 1)
        y = g.conv_bn(y, width, width, 3, stride)
        y = g.conv_bn(y, width, cout, 1, act=None)
        shortcut = g.conv_bn(x, cin, cout, 1, stride, act=None) if (stride != 1 or cin != cout) else x
        return g.node("Relu", [g.node("Add", [y, shortcut], "add")], "relu")

    x = g.conv_bn("input", 3, 64, 7, 2)
    x = g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(blocks):
            x = bottleneck(x, cin, width, stride if i == 0 else 1)
            cin = 4 * width
    g.head(x, cin)
    return _finish(g, "resnet50", batch, size)


def mobilenet_v2(size: int = 224, batch: int = 1, seed: int = 11) -> onnx.ModelProto:
    g = CnnBuilder(seed)
    x = g.conv_bn("input", 3, 32, 3, 2, act="relu6")
    cin = 32
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):  # fmt: skip
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            y = g.conv_bn(x, cin, hidden, 1, act="relu6") if t != 1 else x
            y = g.conv_bn(y, hidden, hidden, 3, stride, group=hidden, act="relu6")
            y = g.conv_bn(y, hidden, c, 1, act=None)
            x = g.node("Add", [x, y], "add") if stride == 1 and cin == c else y
            cin = c
    x = g.conv_bn(x, cin, 1280, 1, act="relu6")
    g.head(x, 1280)
    return _finish(g, "mobilenet_v2", batch, size)


def shufflenet_v2(size: int = 224, batch: int = 1, seed: int = 12) -> onnx.ModelProto:
    g = CnnBuilder(seed)

    def shuffle(x, c, h):
        x = g.node("Reshape", [x, g.const("shape", np.array([batch, 2, c // 2, h, h], np.int64))], "reshape")
        x = g.node("Transpose", [x], "shuffle", perm=[0, 2, 1, 3, 4])
        return g.node("Reshape", [x, g.const("shape", np.array([batch, c, h, h], np.int64))], "reshape")

    def unit(x, cin, cout, stride, h):
        half = cout // 2
        if stride == 1:
            split = [g.name("split_a"), g.name("split_b")]
            g.nodes.append(helper.make_node("Split", [x, g.const("halves", np.array([half, half], np.int64))],
                                            split, axis=1))  # fmt: skip
            keep, y, c = split[0], split[1], half
        else:
            keep = g.conv_bn(x, cin, cin, 3, 2, group=cin, act=None)
            keep = g.conv_bn(keep, cin, half, 1)
            y, c = x, cin
        y = g.conv_bn(y, c, half, 1)
        y = g.conv_bn(y, half, half, 3, stride, group=half, act=None)
        y = g.conv_bn(y, half, half, 1)
        h = _out(h, 3, stride, 1)
        return shuffle(g.node("Concat", [keep, y], "concat", axis=1), cout, h), h

    x = g.conv_bn("input", 3, 24, 3, 2)
    h = _out(size, 3, 2, 1)
    x = g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    h = _out(h, 3, 2, 1)
    cin = 24
    for cout, repeats in ((116, 4), (232, 8), (464, 4)):
        for i in range(repeats):
            x, h = unit(x, cin, cout, 2 if i == 0 else 1, h)
            cin = cout
    x = g.conv_bn(x, cin, 1024, 1)
    g.head(x, 1024)
    return _finish(g, "shufflenet_v2", batch, size)


def squeezenet_1_1(size: int = 224, batch: int = 1, seed: int = 13) -> onnx.ModelProto:
    g = CnnBuilder(seed)

    def relu_conv(x, cin, cout, k):
        return g.node("Relu", [g.conv(x, cin, cout, k, bias=True)], "relu")

    def fire(x, cin, squeeze, expand):
        s = relu_conv(x, cin, squeeze, 1)
        return g.node("Concat", [relu_conv(s, squeeze, expand, 1), relu_conv(s, squeeze, expand, 3)],
                      "concat", axis=1)  # fmt: skip

    def pool(x):
        return g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2])

    x = g.node("Relu", [g.conv("input", 3, 64, 3, 2, pad=0, bias=True)], "relu")
    x = pool(x)
    x = fire(x, 64, 16, 64)
    x = fire(x, 128, 16, 64)
    x = pool(x)
    x = fire(x, 128, 32, 128)
    x = fire(x, 256, 32, 128)
    x = pool(x)
    x = fire(x, 256, 48, 192)
    x = fire(x, 384, 48, 192)
    x = fire(x, 384, 64, 256)
    x = fire(x, 512, 64, 256)
    x = relu_conv(x, 512, 1000, 1)
    x = g.node("GlobalAveragePool", [x], "avgpool")
    g.nodes.append(helper.make_node("Flatten", [x], ["output"], axis=1))
    return _finish(g, "squeezenet_1_1", batch, size)


def densenet_blocks(size: int = 224, batch: int = 1, seed: int = 14,
                    blocks=(6, 12, 24, 16), growth: int = 32) -> onnx.ModelProto:  # fmt: skip
    g = CnnBuilder(seed)

    def bn_relu_conv(x, cin, cout, k):
        return g.conv(g.act(g.batch_norm(x, cin), "relu"), cin, cout, k)

    x = g.conv_bn("input", 3, 64, 7, 2)
    x = g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = 64
    for n, layers in enumerate(blocks):
        for _ in range(layers):
            y = bn_relu_conv(x, c, 4 * growth, 1)
            y = bn_relu_conv(y, 4 * growth, growth, 3)
            x = g.node("Concat", [x, y], "concat", axis=1)
            c += growth
        if n != len(blocks) - 1:
            x = bn_relu_conv(x, c, c // 2, 1)
            x = g.node("AveragePool", [x], "avgpool", kernel_shape=[2, 2], strides=[2, 2])
            c //= 2
    x = g.act(g.batch_norm(x, c), "relu")
    g.head(x, c)
    return _finish(g, "densenet_blocks", batch, size)


def _resnet18(size: int = 224, batch: int = 1) -> onnx.ModelProto:
    return resnet18(batch=batch, size=size)


def _bert(size: int = 224, batch: int = 1) -> onnx.ModelProto:
    if batch != 1:
        raise ValueError("the BERT layer of bench/models.py has batch 1")
    return bert_layer()


NETWORKS = {
    "resnet18": (_resnet18, (1, 3, 224, 224)),
    "resnet50": (resnet50, (1, 3, 224, 224)),
    "mobilenet_v2": (mobilenet_v2, (1, 3, 224, 224)),
    "shufflenet_v2": (shufflenet_v2, (1, 3, 224, 224)),
    "squeezenet_1_1": (squeezenet_1_1, (1, 3, 224, 224)),
    "densenet_blocks": (densenet_blocks, (1, 3, 224, 224)),
    "bert": (_bert, (1, 128, 768)),
}
