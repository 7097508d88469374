"""Whole models: tilecraft (fusion on and off) against onnxruntime and op-at-a-time numpy.

Builds three ONNX models with onnx.helper (fixed seeds, random weights), writes them
to a temporary directory, and measures in one run:

- ResNet-18, 1x3x224x224: torchvision's architecture (conv7x7/2 + batch_norm + relu,
  maxpool 3x3/2, four stages of two BasicBlocks with 1x1/2 downsample convs in
  stages 2-4, global average pool, fc 1000);
- an MLP, batch 32: 784-1024-1024-10 (Gemm with transB, relu between);
- a BERT-base encoder layer, batch 1, seq 128: hidden 768, 12 heads, FFN 3072,
  GELU written as exporters write it (x * 0.5 * (1 + erf(x / sqrt 2))),
  LayerNormalization, attention with Softmax, MatMul weights [K, N];
- MobileNet-v1, 1x3x224x224: 13 depthwise-separable blocks (depthwise 3x3 and
  pointwise 1x1 convs, each with batch_norm and ReLU6 as Clip), fc 1000.

Columns: tilecraft (`tilecraft.compile(path)`) and with fusion off
(`fuse=False`), onnxruntime on 2 threads (intra_op 2, inter_op 1), and a numpy
interpreter of the ONNX graph that runs one op at a time (OpenBLAS for Conv via
im2col, Gemm and MatMul). Latency is the median of interleaved rounds, with a pause
before each block so idle OpenMP/BLAS threads of the previous one sleep
(`timed` of bench/timing.py). Also tilecraft's compile time, its largest
difference from onnxruntime's output, and its planned peak memory (the arena of
intermediates) against the naive sum of all intermediates. "fusion ceiling" is
what fusion could buy at most: the unfused model's time over that time less its
injective and broadcast kernels (from `CompiledModel.profile`), as if fusion
made every one of them free.

Anything that cannot be measured (tilecraft.compile missing or failing on a model)
is printed as unavailable, with the reason, and is null in the JSON; no figure is
printed that was not measured in this run. A wrong answer is never a figure: when
tilecraft's output (or a single layer's, with `--layers`) differs from onnxruntime's
by more than `within_tolerance` allows, or has another shape, the bench prints
"WRONG" for it and exits with status 1 after its report.

`--layers` instead measures each distinct ResNet-18 conv layer and the BERT/MLP
dense and matmul shapes as single kernels (topi's compute + schedule, in the
layouts alter-layout produces: NCHW16c data, OIHW16i16o kernels, KN dense weights) against
onnxruntime running the same single node, in GFLOP/s.

`--models zoo`: the onnx package's light model-zoo files (AlexNet, GoogLeNet, Inception
v2, SqueezeNet, VGG19, DenseNet121, ShuffleNet, ResNet-50, ZFNet-512; opset 9, 1x3x224x224)
with random weights (tilecraft/frontends/onnx/zoo.py): tilecraft's time against
onnxruntime's (medians, ratio), its compile time and largest difference; it exits 1
when a model's outputs differ from onnxruntime's (rtol 1e-3, atol 1e-5) or it fails.

`--models nets`: the networks of bench/networks.py (ResNet-18 and -50, MobileNet-v2,
ShuffleNet-v2, SqueezeNet-1.1, DenseNet-121 blocks, the BERT layer) at 224x224, untuned
tilecraft against onnxruntime (medians, ratio, geomean); WRONG and exit 1 on a mismatch.

Usage: python bench/models.py [--models resnet18,mlp,bert,mobilenet|small|zoo|nets] [--repeat N] [--layers]
`--models small`: ResNet-18 and MobileNet-v1 at 32x32, an MLP 64-128-10 at batch 1, a
BERT-style layer (seq 16, hidden 64): models where calling overhead matters.
The last line printed is one JSON object with the headline figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
import traceback

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from timing import timed  # bench/timing.py, beside this script

OPSET = 17
IR_VERSION = 8  # onnxruntime reads IR <= 10; onnx's default is newer


# ---------------------------------------------------------------------------------
# Models


class GraphBuilder:
    """Nodes, initializers and fresh names for one onnx.helper graph."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, hint: str, array) -> str:
        name = self.name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, hint: str, shape, fan_in: int) -> str:
        # He-style scale keeps activations O(1) through deep stacks.
        w = self.rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)
        return self.const(hint, w.astype(np.float32))

    def node(self, op: str, inputs: list[str], hint: str | None = None, **attrs) -> str:
        out = self.name(hint or op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def model(self, name: str, inputs, outputs) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION
        )
        onnx.checker.check_model(model)
        return model


def _value(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def resnet18(batch: int = 1, seed: int = 0, size: int = 224) -> onnx.ModelProto:
    g = GraphBuilder(seed)

    def conv_bn(x, cin, cout, k, stride, relu):
        w = g.weight("conv_w", (cout, cin, k, k), cin * k * k)
        pad = k // 2
        y = g.node("Conv", [x, w], "conv", kernel_shape=[k, k], strides=[stride, stride],
                   pads=[pad] * 4)  # fmt: skip
        scale = g.const("bn_scale", (1 + 0.1 * g.rng.standard_normal(cout)).astype(np.float32))
        shift = g.const("bn_bias", (0.1 * g.rng.standard_normal(cout)).astype(np.float32))
        mean = g.const("bn_mean", (0.1 * g.rng.standard_normal(cout)).astype(np.float32))
        var = g.const("bn_var", (1 + 0.1 * g.rng.random(cout)).astype(np.float32))
        y = g.node("BatchNormalization", [y, scale, shift, mean, var], "bn", epsilon=1e-5)
        return g.node("Relu", [y], "relu") if relu else y

    def basic_block(x, cin, cout, stride):
        y = conv_bn(x, cin, cout, 3, stride, relu=True)
        y = conv_bn(y, cout, cout, 3, 1, relu=False)
        shortcut = conv_bn(x, cin, cout, 1, stride, relu=False) if (stride != 1 or cin != cout) else x
        return g.node("Relu", [g.node("Add", [y, shortcut], "add")], "relu")

    x = conv_bn("input", 3, 64, 7, 2, relu=True)
    x = g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        x = basic_block(x, cin, cout, stride)
        x = basic_block(x, cout, cout, 1)
        cin = cout
    x = g.node("GlobalAveragePool", [x], "avgpool")
    x = g.node("Flatten", [x], "flatten", axis=1)
    fc_w = g.weight("fc_w", (1000, 512), 512)
    fc_b = g.const("fc_b", np.zeros(1000, np.float32))
    g.nodes.append(helper.make_node("Gemm", [x, fc_w, fc_b], ["output"], transB=1))
    return g.model("resnet18", [_value("input", [batch, 3, size, size])], [_value("output", [batch, 1000])])


def mobilenet_v1(batch: int = 1, seed: int = 2, size: int = 224) -> onnx.ModelProto:
    """MobileNet-v1 (width 1.0, 224x224): a 3x3/2 conv, then 13 depthwise-separable
    blocks (depthwise 3x3 + BN + ReLU6, pointwise 1x1 + BN + ReLU6), global average
    pool, fc 1000."""
    g = GraphBuilder(seed)
    zero, six = g.const("zero", np.array(0.0, np.float32)), g.const("six", np.array(6.0, np.float32))

    def conv_bn_relu6(x, cin, cout, k, stride, group=1):
        w = g.weight("conv_w", (cout, cin // group, k, k), cin // group * k * k)
        y = g.node("Conv", [x, w], "conv", kernel_shape=[k, k], strides=[stride, stride],
                   pads=[k // 2] * 4, group=group)  # fmt: skip
        scale = g.const("bn_scale", (1 + 0.1 * g.rng.standard_normal(cout)).astype(np.float32))
        shift = g.const("bn_bias", (0.1 * g.rng.standard_normal(cout)).astype(np.float32))
        mean = g.const("bn_mean", (0.1 * g.rng.standard_normal(cout)).astype(np.float32))
        var = g.const("bn_var", (1 + 0.1 * g.rng.random(cout)).astype(np.float32))
        y = g.node("BatchNormalization", [y, scale, shift, mean, var], "bn", epsilon=1e-5)
        return g.node("Clip", [y, zero, six], "relu6")

    x = conv_bn_relu6("input", 3, 32, 3, 2)
    cin = 32
    blocks = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]
    for cout, stride in blocks:
        x = conv_bn_relu6(x, cin, cin, 3, stride, group=cin)
        x = conv_bn_relu6(x, cin, cout, 1, 1)
        cin = cout
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "avgpool")], "flatten", axis=1)
    fc_w = g.weight("fc_w", (1000, 1024), 1024)
    fc_b = g.const("fc_b", np.zeros(1000, np.float32))
    g.nodes.append(helper.make_node("Gemm", [x, fc_w, fc_b], ["output"], transB=1))
    return g.model("mobilenet_v1", [_value("input", [batch, 3, size, size])], [_value("output", [batch, 1000])])


def mlp(batch: int = 32, sizes=(784, 1024, 1024, 10), seed: int = 1) -> onnx.ModelProto:
    g = GraphBuilder(seed)
    x = "input"
    for n, (k, units) in enumerate(zip(sizes[:-1], sizes[1:])):
        w = g.weight("w", (units, k), k)
        b = g.const("b", (0.01 * g.rng.standard_normal(units)).astype(np.float32))
        last = n == len(sizes) - 2
        if last:
            g.nodes.append(helper.make_node("Gemm", [x, w, b], ["output"], transB=1))
        else:
            x = g.node("Relu", [g.node("Gemm", [x, w, b], "gemm", transB=1)], "relu")
    return g.model("mlp", [_value("input", [batch, sizes[0]])], [_value("output", [batch, sizes[-1]])])


def bert_layer(seq: int | str = 128, hidden: int = 768, heads: int = 12, ffn: int = 3072,
               seed: int = 2, batch: int | str = 1) -> onnx.ModelProto:  # fmt: skip
    """One BERT encoder layer; `batch` and `seq` may be names (ONNX dim_param): the
    head reshapes copy those extents (0 in the shape), as exporters write them."""
    g = GraphBuilder(seed)
    dh = hidden // heads

    def linear(x, k, n):
        w = g.weight("w", (k, n), k)  # MatMul weights [K, N], as exporters write them
        b = g.const("b", (0.01 * g.rng.standard_normal(n)).astype(np.float32))
        return g.node("Add", [g.node("MatMul", [x, w], "matmul"), b], "add")

    def layer_norm(x):
        gamma = g.const("ln_w", (1 + 0.1 * g.rng.standard_normal(hidden)).astype(np.float32))
        beta = g.const("ln_b", (0.1 * g.rng.standard_normal(hidden)).astype(np.float32))
        return g.node("LayerNormalization", [x, gamma, beta], "ln", axis=-1, epsilon=1e-12)

    x = "input"
    split = g.const("heads_shape", np.array([0, 0, heads, dh], np.int64))
    q = g.node("Transpose", [g.node("Reshape", [linear(x, hidden, hidden), split])], perm=[0, 2, 1, 3])
    k = g.node("Transpose", [g.node("Reshape", [linear(x, hidden, hidden), split])], perm=[0, 2, 3, 1])
    v = g.node("Transpose", [g.node("Reshape", [linear(x, hidden, hidden), split])], perm=[0, 2, 1, 3])
    scores = g.node("Div", [g.node("MatMul", [q, k]), g.const("scale", np.float32(math.sqrt(dh)))])
    probs = g.node("Softmax", [scores], axis=-1)
    ctx = g.node("Transpose", [g.node("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, g.const("merge_shape", np.array([0, 0, hidden], np.int64))])
    h1 = layer_norm(g.node("Add", [linear(ctx, hidden, hidden), x]))
    f = linear(h1, hidden, ffn)
    erf = g.node("Erf", [g.node("Div", [f, g.const("sqrt2", np.float32(math.sqrt(2.0)))])])
    gelu = g.node("Mul", [g.node("Mul", [f, g.node("Add", [erf, g.const("one", np.float32(1))])]),
                          g.const("half", np.float32(0.5))])  # fmt: skip
    out = layer_norm(g.node("Add", [linear(gelu, ffn, hidden), h1]))
    g.nodes.append(helper.make_node("Identity", [out], ["output"]))
    return g.model("bert_layer", [_value("input", [batch, seq, hidden])], [_value("output", [batch, seq, hidden])])


MODELS = {
    "resnet18": (resnet18, (1, 3, 224, 224)),
    "mlp": (mlp, (32, 784)),
    "bert": (bert_layer, (1, 128, 768)),
    "mobilenet": (mobilenet_v1, (1, 3, 224, 224)),
    # Small models, where the cost of calling the kernels is a large share of the
    # time (the default --models leaves them out; --models small runs them).
    "resnet18_32": (lambda: resnet18(size=32), (1, 3, 32, 32)),
    "mobilenet_32": (lambda: mobilenet_v1(size=32), (1, 3, 32, 32)),
    "mlp_small": (lambda: mlp(1, (64, 128, 10)), (1, 64)),
    "bert_small": (lambda: bert_layer(16, 64, 2, 256), (1, 16, 64)),
}
SMALL = ["resnet18_32", "mobilenet_32", "mlp_small", "bert_small"]


# ---------------------------------------------------------------------------------
# Op-at-a-time numpy


def _conv(x, w, b, strides, pads, dilations, group):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    (sh, sw), (dh, dw) = strides, dilations
    oh = (x.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (x.shape[3] - dw * (kw - 1) - 1) // sw + 1
    og = o // group
    out = np.empty((n, o, oh, ow), np.float32)
    if group == c == o and cg == 1:  # depthwise: a weighted sum of shifted windows
        out[:] = 0
        for i in range(kh):
            for j in range(kw):
                window = x[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw]
                out += window * w[None, :, 0, i, j, None, None]
        return out + (b[None, :, None, None] if b is not None else 0)
    for gi in range(group):
        xs = x[:, gi * cg : (gi + 1) * cg]
        cols = np.stack(  # im2col: [n, cg, kh, kw, oh, ow]
            [np.stack([xs[:, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh,
                          j * dw : j * dw + sw * (ow - 1) + 1 : sw] for j in range(kw)], 2)
             for i in range(kh)], 2)  # fmt: skip
        cols = cols.reshape(n, cg * kh * kw, oh * ow)
        ws = w[gi * og : (gi + 1) * og].reshape(og, -1)
        out[:, gi * og : (gi + 1) * og] = np.matmul(ws, cols).reshape(n, og, oh, ow)
    if b is not None:
        out += b[None, :, None, None]
    return out


def _maxpool(x, k, s, p):
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])), constant_values=-np.inf)
    oh = (x.shape[2] - k[0]) // s[0] + 1
    ow = (x.shape[3] - k[1]) // s[1] + 1
    out = np.full(x.shape[:2] + (oh, ow), -np.inf, np.float32)
    for i in range(k[0]):
        for j in range(k[1]):
            np.maximum(out, x[:, :, i : i + s[0] * (oh - 1) + 1 : s[0], j : j + s[1] * (ow - 1) + 1 : s[1]], out=out)
    return out


def _erf(x):
    from scipy.special import erf

    return erf(x).astype(np.float32)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm(x, w, b, axis, eps):
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


class NumpyInterpreter:
    """Runs an ONNX graph one node at a time in numpy (the ops these models use)."""

    def __init__(self, model: onnx.ModelProto):
        self.graph = model.graph
        self.consts = {t.name: numpy_helper.to_array(t) for t in self.graph.initializer}
        self.attrs = [{a.name: helper.get_attribute_value(a) for a in n.attribute} for n in self.graph.node]

    def __call__(self, **inputs):
        env = dict(self.consts)
        env.update(inputs)
        for node, at in zip(self.graph.node, self.attrs):
            args = [env[i] if i else None for i in node.input]
            env[node.output[0]] = self.op(node.op_type, args, at)
        return [env[o.name] for o in self.graph.output]

    @staticmethod
    def op(kind, a, at):
        if kind == "Conv":
            k = len(a[1].shape) - 2
            return _conv(a[0], a[1], a[2] if len(a) > 2 else None, at.get("strides", [1] * k),
                         at.get("pads", [0] * 2 * k), at.get("dilations", [1] * k), at.get("group", 1))  # fmt: skip
        if kind == "BatchNormalization":
            x, s, b, m, v = a
            scale = (s / np.sqrt(v + at.get("epsilon", 1e-5))).astype(np.float32)
            return x * scale[None, :, None, None] + (b - m * scale)[None, :, None, None]
        if kind == "Relu":
            return np.maximum(a[0], 0)
        if kind == "Clip":
            return np.clip(a[0], a[1], a[2])
        if kind == "MaxPool":
            return _maxpool(a[0], at["kernel_shape"], at.get("strides", [1, 1]), at.get("pads", [0] * 4))
        if kind == "GlobalAveragePool":
            return a[0].mean(axis=(2, 3), keepdims=True)
        if kind == "Flatten":
            return a[0].reshape(math.prod(a[0].shape[: at.get("axis", 1)]), -1)
        if kind == "Gemm":
            x = a[0].T if at.get("transA") else a[0]
            w = a[1].T if at.get("transB") else a[1]
            y = at.get("alpha", 1.0) * (x @ w)
            return y + at.get("beta", 1.0) * a[2] if len(a) > 2 else y
        if kind == "MatMul":
            return np.matmul(a[0], a[1])
        if kind == "Add":
            return a[0] + a[1]
        if kind == "Mul":
            return a[0] * a[1]
        if kind == "Div":
            return a[0] / a[1]
        if kind == "Erf":
            return _erf(a[0])
        if kind == "Reshape":
            shape = [d if d != 0 else a[0].shape[n] for n, d in enumerate(a[1])]
            return a[0].reshape(shape)
        if kind == "Transpose":
            return np.ascontiguousarray(a[0].transpose(at["perm"]))
        if kind == "Softmax":
            return _softmax(a[0], at.get("axis", -1))
        if kind == "LayerNormalization":
            return _layer_norm(a[0], a[1], a[2], at.get("axis", -1), at.get("epsilon", 1e-5))
        if kind == "Identity":
            return a[0]
        raise NotImplementedError(f"numpy interpreter: no {kind}")


# ---------------------------------------------------------------------------------
# Measuring


def ort_session(model_or_bytes):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    data = model_or_bytes if isinstance(model_or_bytes, bytes) else model_or_bytes.SerializeToString()
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def tilecraft_compile(path: str, fuse: bool):
    """(compiled model, seconds) or (None, reason) when tilecraft cannot compile it."""
    try:
        import tilecraft
    except ImportError as e:
        return None, f"import tilecraft: {e}"
    if not hasattr(tilecraft, "compile"):
        return None, "tilecraft.compile does not exist yet"
    try:
        t0 = time.perf_counter()
        m = tilecraft.compile(path, fuse=fuse)
        return m, time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001 - report any failure as "unavailable"
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        return None, f"tilecraft.compile(fuse={fuse}) failed: {last[:200]}"


# A compiled output matches onnxruntime's when every element is within
# ATOL + RTOL * max|expected| of it (fp32 sums reassociated by tiling and fusion).
RTOL, ATOL = 1e-3, 1e-4


def within_tolerance(got, expected: np.ndarray) -> tuple[bool, float]:
    """Whether `got` matches `expected` (same shape, every element close, no NaN
    where the expected value is finite), and the largest difference."""
    got = np.asarray(got)
    if got.shape != expected.shape:
        return False, math.inf
    err = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    diff = float(np.nanmax(err)) if err.size else 0.0
    bound = ATOL + RTOL * float(np.abs(expected).max(initial=0.0))
    finite = np.isfinite(expected)
    ok = bool(np.all(err[finite] <= bound)) and not bool(np.isnan(got[finite]).any())
    return ok, diff


def measure_model(name: str, directory: str, repeat: int, network: bool = False) -> dict:
    """One model's row. `network`: a model of bench/networks.py's NETWORKS, measured
    with fusion on only and without the numpy interpreter (which lacks their ops)."""
    from networks import NETWORKS  # bench/networks.py (it imports this module)

    make, shape = NETWORKS[name] if network else MODELS[name]
    model = make()
    path = os.path.join(directory, f"{name}.onnx")
    onnx.save(model, path)
    x = np.random.default_rng(100).standard_normal(shape).astype(np.float32)
    feeds = {"input": x}
    session = ort_session(model)
    expected = session.run(None, feeds)[0]
    row: dict = {"model": name, "notes": []}
    fns = {"onnxruntime": lambda: session.run(None, feeds)}
    if not network:
        interp = NumpyInterpreter(model)
        row["numpy_max_diff"] = float(np.abs(interp(**feeds)[0] - expected).max())
        fns["numpy"] = lambda: interp(**feeds)
    for label, fuse in (("tilecraft", True),) + (() if network else (("tilecraft_nofuse", False),)):
        m, info = tilecraft_compile(path, fuse)
        if m is None:
            row["notes"].append(info)
            continue
        try:
            got = m(x)
            got = got[0] if isinstance(got, (list, tuple)) else got
            ok, diff = within_tolerance(got, expected)
        except Exception as e:  # noqa: BLE001
            row["notes"].append(f"{label} run failed: {type(e).__name__}: {str(e)[:200]}")
            continue
        if not ok:
            row.setdefault("wrong", []).append(label)
            row["notes"].append(
                f"WRONG: {label} differs from onnxruntime by {diff:.3g} "
                f"(tolerance {ATOL:g} + {RTOL:g} * max|expected|)"
            )
        row[f"{label}_compile_s"] = info
        row[f"{label}_max_diff"] = diff
        if label == "tilecraft":
            row["planned_bytes"] = int(m.planned_bytes)
            row["naive_bytes"] = int(m.naive_bytes)
        else:
            row["elementwise_share"] = elementwise_share(m, x)
        fns[label] = lambda m=m: m(x)
    times = timed(fns, repeat)
    for label, t in times.items():
        row[f"{label}_ms"] = t * 1e3
    return row


def elementwise_share(m, x: np.ndarray) -> float:
    """Share of the unfused model's kernel time spent in injective and broadcast
    kernels (relu, bias and residual adds, transposes, ...): all that fuse-ops can
    fold into a neighbour. 1 / (1 - share) bounds what fusion can buy, however well
    it is done. With fusion off each kernel holds one op and is named after it,
    `fused_<op>` (`fused_<op>_<n>` when names repeat)."""
    from tilecraft.dialects.graph import GRAPH_OPS, Broadcast, Injective

    kinds = {op.name.removeprefix("graph."): op for op in GRAPH_OPS}
    profile = m.profile(x, repeat=10)
    total = sum(t for _, t in profile)
    fusible = sum(
        t
        for kernel, t in profile
        if (op := kinds.get(_op_of_kernel(kernel, kinds))) is not None
        and (op.has_trait(Injective) or op.has_trait(Broadcast))
    )
    return fusible / total


def _op_of_kernel(kernel: str, kinds: dict) -> str:
    name = kernel.removeprefix("fused_")
    return name if name in kinds else name.rsplit("_", 1)[0]


def _fmt(value, spec: str) -> str:
    return "unavailable" if value is None else format(value, spec)


def print_models(rows: list[dict]) -> None:
    header = (f"{'model':>9} {'tilecraft ms':>13} {'no-fusion ms':>13} {'ORT(2t) ms':>11} "
              f"{'numpy ms':>9} {'tc/ORT':>7} {'fusion x':>9} {'compile s':>10} "
              f"{'planned MB':>11} {'naive MB':>9} {'max|tc-ORT|':>12} {'fusion ceiling':>15}")  # fmt: skip
    print(header)
    for r in rows:
        tc_ms, nf_ms, ort_ms = r.get("tilecraft_ms"), r.get("tilecraft_nofuse_ms"), r["onnxruntime_ms"]
        print(
            f"{r['model']:>9} {_fmt(tc_ms, '13.2f')} {_fmt(nf_ms, '13.2f')} {ort_ms:>11.2f} "
            f"{r['numpy_ms']:>9.2f} {_fmt(tc_ms and tc_ms / ort_ms, '7.2f')} "
            f"{_fmt(tc_ms and nf_ms and nf_ms / tc_ms, '9.2f')} "
            f"{_fmt(r.get('tilecraft_compile_s'), '10.2f')} "
            f"{_fmt(r.get('planned_bytes') and r['planned_bytes'] / 1e6, '11.2f')} "
            f"{_fmt(r.get('naive_bytes') and r['naive_bytes'] / 1e6, '9.2f')} "
            f"{_fmt(r.get('tilecraft_max_diff'), '12.2e')} "
            f"{_fmt(_ceiling(r), '15.2f')}"
        )
        for note in r["notes"]:
            print(f"{'':>9} note: {note}")


def _ceiling(row: dict) -> float | None:
    share = row.get("elementwise_share")
    return None if share is None else 1 / (1 - share)


def headline(rows: dict[str, dict]) -> dict:
    def ratio(model, num, den):
        r = rows.get(model, {})
        a, b = r.get(f"{num}_ms"), r.get(f"{den}_ms")
        return round(a / b, 3) if a and b else None

    resnet = rows.get("resnet18", {})
    planned, naive = resnet.get("planned_bytes"), resnet.get("naive_bytes")
    compile_s = resnet.get("tilecraft_compile_s")
    return {
        "bench": "models",
        "resnet18_vs_ort": ratio("resnet18", "tilecraft", "onnxruntime"),
        "bert_layer_vs_ort": ratio("bert", "tilecraft", "onnxruntime"),
        "mlp_vs_ort": ratio("mlp", "tilecraft", "onnxruntime"),
        "mobilenet_v1_vs_ort": ratio("mobilenet", "tilecraft", "onnxruntime"),
        "small_vs_ort": {m: ratio(m, "tilecraft", "onnxruntime") for m in rows if m in SMALL},
        "fusion_speedup": ratio("resnet18", "tilecraft_nofuse", "tilecraft"),
        "fusion_ceiling": round(c, 3) if (c := _ceiling(resnet)) is not None else None,
        "fusion_speedup_by_model": {m: ratio(m, "tilecraft_nofuse", "tilecraft") for m in rows},
        "planned_memory_ratio": round(planned / naive, 3) if planned and naive else None,
        "resnet18_compile_s": round(compile_s, 2) if compile_s is not None else None,
    }


# ---------------------------------------------------------------------------------
# Single layers


RESNET18_CONVS = [  # (C, H=W, O, K, stride, pad): every distinct conv of ResNet-18
    (3, 224, 64, 7, 2, 3), (64, 56, 64, 3, 1, 1), (64, 56, 128, 3, 2, 1), (64, 56, 128, 1, 2, 0),
    (128, 28, 128, 3, 1, 1), (128, 28, 256, 3, 2, 1), (128, 28, 256, 1, 2, 0),
    (256, 14, 256, 3, 1, 1), (256, 14, 512, 3, 2, 1), (256, 14, 512, 1, 2, 0),
    (512, 7, 512, 3, 1, 1),
]  # fmt: skip
GEMMS = [  # (kind, batch, M, K, N): dense = x[M, K] @ w[N, K]^T; matmul = batched a @ b
    ("dense", 1, 128, 768, 768), ("dense", 1, 128, 768, 3072), ("dense", 1, 128, 3072, 768),
    ("matmul", 12, 128, 64, 128), ("matmul", 12, 128, 128, 64),
    ("dense", 1, 32, 784, 1024), ("dense", 1, 32, 1024, 1024), ("dense", 1, 1, 512, 1000),
    ("dense", 1, 64, 1024, 1024),
]  # fmt: skip


def _single_node(op: str, inputs: dict, inits: dict, **attrs):
    node = helper.make_node(op, list(inputs) + list(inits), ["y"], **attrs)
    graph = helper.make_graph(
        [node], op,
        [_value(n, a.shape) for n, a in inputs.items()], [_value("y", None)],
        [numpy_helper.from_array(a, n) for n, a in inits.items()],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=IR_VERSION)
    session = ort_session(model)
    return lambda: session.run(None, inputs), session.run(None, inputs)[0]


def measure_layers(repeat: int) -> list[dict]:
    import tilecraft as tc
    from tilecraft import te
    from tilecraft.topi.conv2d import (
        conv2d_compute,
        pack_conv2d_weight,
        pack_data,
        schedule_conv2d,
        unpack_data,
    )
    from tilecraft.topi.dense import (
        dense_compute,
        matmul_compute,
        pack_dense_weight,
        schedule_dense,
        schedule_matmul,
    )

    rng = np.random.default_rng(3)
    rows = []
    for C, H, O, K, S, P in RESNET18_CONVS:
        x = rng.standard_normal((1, C, H, H)).astype(np.float32)
        w = (rng.standard_normal((O, C, K, K)) / math.sqrt(C * K * K)).astype(np.float32)
        ort_fn, expected = _single_node("Conv", {"x": x}, {"w": w}, kernel_shape=[K, K],
                                        strides=[S, S], pads=[P] * 4)  # fmt: skip
        # The first conv keeps its 3-channel NCHW input (alter-layout's choice too).
        dl, kib = ("NCHW", C) if C % 16 else ("NCHW16c", 16)
        xi = x if dl == "NCHW" else pack_data(x, 16)
        wi = pack_conv2d_weight(w, kib, 16)
        X = te.placeholder(xi.shape, "float32", name="x")
        W = te.placeholder(wi.shape, "float32", name="w")
        Y = conv2d_compute(X, W, None, strides=(S, S), pads=(P,) * 4, data_layout=dl,
                           kernel_layout=f"OIHW{kib}i16o", out_layout="NCHW16c")  # fmt: skip
        s = te.create_schedule(Y)
        schedule_conv2d(s, Y, Y, [])
        f = tc.build(s, [X, W, Y])
        y = np.full(Y.shape, np.nan, np.float32)  # a kernel that writes nothing fails
        f(xi, wi, y)
        ok, diff = within_tolerance(unpack_data(y), expected)
        oh = (H + 2 * P - K) // S + 1
        times = timed({"tc": lambda: f(xi, wi, y), "ort": ort_fn}, repeat)
        rows.append({"layer": f"conv {C}x{H}x{H} -> {O} k{K} s{S}",
                     "gflop": 2 * O * oh * oh * C * K * K / 1e9, "diff": diff, "ok": ok, **times})  # fmt: skip
    for kind, B, M, K, N in GEMMS:
        if kind == "dense":
            x = rng.standard_normal((M, K)).astype(np.float32)
            w = (rng.standard_normal((N, K)) / math.sqrt(K)).astype(np.float32)
            ort_fn, expected = _single_node("Gemm", {"x": x}, {"w": w}, transB=1)
            # The weight in the KN layout alter-layout gives dense weights.
            w = pack_dense_weight(w)
            X = te.placeholder(x.shape, "float32", name="x")
            W = te.placeholder(w.shape, "float32", name="w")
            Y = dense_compute(X, W, None, weight_layout="KN")
            s = te.create_schedule(Y)
            schedule_dense(s, Y, Y, [])
            label = f"dense {M}x{K} @ [{N}x{K}]^T"
        else:
            x = rng.standard_normal((1, B, M, K)).astype(np.float32)
            w = rng.standard_normal((1, B, K, N)).astype(np.float32)
            ort_fn, expected = _single_node("MatMul", {"x": x, "w": w}, {})
            X = te.placeholder(x.shape, "float32", name="x")
            W = te.placeholder(w.shape, "float32", name="w")
            Y = matmul_compute(X, W)
            s = te.create_schedule(Y)
            schedule_matmul(s, Y, Y, [])
            label = f"matmul {B}x{M}x{K} @ {B}x{K}x{N}"
        f = tc.build(s, [X, W, Y])
        y = np.full(Y.shape, np.nan, np.float32)  # a kernel that writes nothing fails
        f(x, w, y)
        ok, diff = within_tolerance(y, expected)
        times = timed({"tc": lambda: f(x, w, y), "ort": ort_fn}, repeat)
        rows.append({"layer": label, "gflop": 2 * B * M * K * N / 1e9, "diff": diff, "ok": ok, **times})
    print(f"{'layer':>34} {'tc ms':>8} {'tc GF/s':>8} {'ORT ms':>8} {'ORT GF/s':>9} {'tc/ORT':>7} {'max diff':>9}")
    for r in rows:
        print(f"{r['layer']:>34} {r['tc'] * 1e3:>8.3f} {r['gflop'] / r['tc']:>8.1f} "
              f"{r['ort'] * 1e3:>8.3f} {r['gflop'] / r['ort']:>9.1f} {r['tc'] / r['ort']:>7.2f} "
              f"{r['diff']:>9.1e}{'' if r['ok'] else '  WRONG'}")  # fmt: skip
    return rows


# ---------------------------------------------------------------------------------
# Model-zoo files (--models zoo)


def measure_zoo(name: str, repeat: int) -> dict:
    """One light zoo model with random weights: compile, check against onnxruntime, time."""
    from tilecraft.frontends.onnx import zoo

    model = zoo.load(name, seed=1)
    x = np.random.default_rng(100).standard_normal((1, 3, 224, 224)).astype(np.float32)
    feeds = {model.graph.input[0].name: x}
    session = ort_session(model)
    expected = session.run(None, feeds)[0]
    row: dict = {"model": name, "ok": False, "notes": []}
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, f"{name}.onnx")
        onnx.save(model, path)
        m, info = tilecraft_compile(path, True)
    if m is None:
        row["notes"].append(info)
        return row
    got = m(x)
    got = np.asarray(got[0] if isinstance(got, (list, tuple)) else got)
    row["compile_s"] = info
    row["max_diff"] = float(np.abs(got - expected).max())
    row["ok"] = got.shape == expected.shape and bool(np.allclose(got, expected, rtol=1e-3, atol=1e-5))
    if not row["ok"]:
        row["notes"].append("outputs differ from onnxruntime's")
    times = timed({"tilecraft": lambda: m(x), "onnxruntime": lambda: session.run(None, feeds)}, repeat)
    row["tilecraft_ms"], row["onnxruntime_ms"] = times["tilecraft"] * 1e3, times["onnxruntime"] * 1e3
    return row


def run_zoo(repeat: int) -> int:
    from tilecraft.frontends.onnx import zoo

    rows = [measure_zoo(name, repeat) for name in zoo.available()]
    print(f"{'model':>13} {'tilecraft ms':>13} {'ORT(2t) ms':>11} {'tc/ORT':>7} {'compile s':>10} {'max|tc-ORT|':>12} ok")
    for r in rows:
        tc_ms, ort_ms = r.get("tilecraft_ms"), r.get("onnxruntime_ms")
        print(f"{r['model']:>13} {_fmt(tc_ms, '13.2f')} {_fmt(ort_ms, '11.2f')} "
              f"{_fmt(tc_ms and ort_ms and tc_ms / ort_ms, '7.2f')} {_fmt(r.get('compile_s'), '10.2f')} "
              f"{_fmt(r.get('max_diff'), '12.2e')} {'yes' if r['ok'] else 'NO'}")  # fmt: skip
        for note in r["notes"]:
            print(f"{'':>13} note: {note}")
    print(json.dumps({
        "bench": "zoo",
        "vs_ort": {r["model"]: round(r["tilecraft_ms"] / r["onnxruntime_ms"], 3) for r in rows if "tilecraft_ms" in r},
        "tilecraft_ms": {r["model"]: round(r["tilecraft_ms"], 2) for r in rows if "tilecraft_ms" in r},
        "compile_s": {r["model"]: round(r["compile_s"], 1) for r in rows if "compile_s" in r},
        "failed": [r["model"] for r in rows if not r["ok"]],
    }))  # fmt: skip
    return 0 if all(r["ok"] for r in rows) else 1


# ---------------------------------------------------------------------------------
# The networks of bench/networks.py (--models nets)


def run_networks(repeat: int) -> int:
    """Every network of NETWORKS, untuned tilecraft against onnxruntime (2 threads)."""
    from networks import NETWORKS

    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for name in NETWORKS:
            rows.append(measure_model(name, directory, repeat, network=True))
            r = rows[-1]
            print(f"{name}: tilecraft {_fmt(r.get('tilecraft_ms'), '.2f')} ms, "
                  f"onnxruntime {r['onnxruntime_ms']:.2f} ms", flush=True)  # fmt: skip
    print(f"{'model':>16} {'tilecraft ms':>13} {'ORT(2t) ms':>11} {'tc/ORT':>7} {'compile s':>10} {'max|tc-ORT|':>12}")
    for r in rows:
        tc_ms, ort_ms = r.get("tilecraft_ms"), r["onnxruntime_ms"]
        print(f"{r['model']:>16} {_fmt(tc_ms, '13.2f')} {ort_ms:>11.2f} {_fmt(tc_ms and tc_ms / ort_ms, '7.2f')} "
              f"{_fmt(r.get('tilecraft_compile_s'), '10.2f')} {_fmt(r.get('tilecraft_max_diff'), '12.2e')}")  # fmt: skip
        for note in r["notes"]:
            print(f"{'':>16} note: {note}")
    ratios = {r["model"]: r["tilecraft_ms"] / r["onnxruntime_ms"] for r in rows if r.get("tilecraft_ms")}
    print(json.dumps({
        "bench": "networks",
        "vs_ort": {m: round(v, 3) for m, v in ratios.items()},
        "tilecraft_ms": {r["model"]: round(r["tilecraft_ms"], 2) for r in rows if r.get("tilecraft_ms")},
        "onnxruntime_ms": {r["model"]: round(r["onnxruntime_ms"], 2) for r in rows},
        "geomean_vs_ort": round(math.exp(statistics.fmean(math.log(v) for v in ratios.values())), 3)
        if ratios else None,
        "unavailable": [r["model"] for r in rows if not r.get("tilecraft_ms")],
    }))  # fmt: skip
    wrong = [r["model"] for r in rows if r.get("wrong")]
    if wrong:
        print(f"bench/models.py: wrong answers (beyond tolerance of onnxruntime): {', '.join(wrong)}")
    return 1 if wrong else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,mlp,bert,mobilenet",
                        help="comma-separated; 'small' names the small models, 'zoo' the model-zoo files, "
                        "'nets' bench/networks.py's networks")
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--layers", action="store_true", help="single conv/dense kernels vs ORT")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}")
    if args.layers:
        rows = measure_layers(args.repeat)
        convs = [r for r in rows if r["layer"].startswith("conv")]
        print(json.dumps({
            "bench": "layers",
            "conv_tc_over_ort_geomean": round(math.exp(statistics.fmean(
                math.log(r["tc"] / r["ort"]) for r in convs)), 3),
            "gemm_tc_over_ort": {r["layer"]: round(r["tc"] / r["ort"], 3) for r in rows if r not in convs},
        }))  # fmt: skip
        wrong = [r["layer"] for r in rows if not r["ok"]]
        if wrong:
            sys.exit(f"bench/models.py: wrong answers (beyond tolerance of onnxruntime): {', '.join(wrong)}")
        return
    if args.models == "zoo":
        sys.exit(run_zoo(args.repeat))
    if args.models == "nets":
        sys.exit(run_networks(args.repeat))
    names = [m for n in args.models.split(",") if n for m in (SMALL if n == "small" else [n])]
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model {n!r}; choose from {', '.join(MODELS)}")
    rows = {}
    with tempfile.TemporaryDirectory() as directory:
        for n in names:
            rows[n] = measure_model(n, directory, args.repeat)
    print_models(list(rows.values()))
    print(json.dumps(headline(rows)))
    wrong = [f"{n} ({', '.join(r['wrong'])})" for n, r in rows.items() if r.get("wrong")]
    if wrong:
        sys.exit(f"bench/models.py: wrong answers (beyond tolerance of onnxruntime): {'; '.join(wrong)}")


if __name__ == "__main__":
    main()
