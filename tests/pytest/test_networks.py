"""The model-zoo CNNs of bench/networks.py, small, through `tilecraft.compile`.

Each network (ResNet-50, MobileNet-v2, ShuffleNet-v2, SqueezeNet-1.1, a DenseNet-121
stack) is built at a small input size, compiled with the default schedules and
compared with onnxruntime within the tolerance bench/models.py uses (every element
within 1e-4 + 1e-3 * max|expected|). Two different inputs must give different
outputs, so a network that collapses to a constant cannot pass. The counts of an
instrumented run equal the static loop-level analysis's, block by block. The full-size
timings are `bench/models.py --models nets`.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import tilecraft as tc  # noqa: E402

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, os.path.abspath(BENCH))
import networks  # noqa: E402  (bench/networks.py)
from models import within_tolerance  # noqa: E402  (bench/models.py)

# (builder, size): the smallest input each network's strides and pools allow
# (SqueezeNet's unpadded stem and pools need 39 or more).
CASES = {
    "resnet50": (networks.resnet50, 32),
    "mobilenet_v2": (networks.mobilenet_v2, 32),
    "shufflenet_v2": (networks.shufflenet_v2, 32),
    "squeezenet_1_1": (networks.squeezenet_1_1, 48),
    "densenet_blocks": (networks.densenet_blocks, 32),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_network_matches_onnxruntime(name):
    build, size = CASES[name]
    model = build(size=size)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    compiled = tc.compile(model)
    rng = np.random.default_rng(5)
    outputs = []
    for _ in range(2):
        x = rng.standard_normal((1, 3, size, size)).astype(np.float32)
        expected = session.run(None, {"input": x})[0]
        got = np.asarray(compiled(x))
        ok, diff = within_tolerance(got, expected)
        assert ok, f"{name}: differs from onnxruntime by {diff:.3g}"
        outputs.append(got)
    assert not np.allclose(outputs[0], outputs[1]), f"{name}: the output does not depend on the input"
    # Run once more with a counter in every block (runtime/counters.py): each block
    # ran exactly as often as the static loop-counts analysis says.
    counts = compiled.counters(x)
    assert counts.mismatches() == [], name
    assert counts.totals()["macs"] > 0


def test_registry_lists_every_network():
    assert set(CASES) | {"resnet18", "bert"} == set(networks.NETWORKS)
    for name, (build, shape) in networks.NETWORKS.items():
        if name == "bert":
            continue
        model = build(size=40, batch=2)
        (inp,) = model.graph.input
        assert [d.dim_value for d in inp.type.tensor_type.shape.dim] == [2, 3, 40, 40], name
        assert shape == (1, 3, 224, 224), name
