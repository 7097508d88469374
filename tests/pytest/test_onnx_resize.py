"""ONNX Resize (frontends/onnx/tensor.py): every mode, coordinate transformation,
antialiasing and tf_crop_and_resize compiled with `tc.compile`, compared with
onnxruntime on shapes beyond the conformance cases (odd sizes, 3 axes)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx.reference import ReferenceEvaluator

import tilecraft as tc

ort = pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(11)


def resize_model(x, roi=None, scales=None, sizes=None, **attrs):
    inits = {"roi": np.array(roi if roi is not None else [], np.float32),
             "scales": np.array(scales if scales is not None else [], np.float32)}  # fmt: skip
    names = ["x", "roi", "scales"]
    if sizes is not None:
        inits["sizes"] = np.array(sizes, np.int64)
        names.append("sizes")
    node = helper.make_node("Resize", names, ["y"], name="r0", **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, n) for n, v in inits.items()])  # fmt: skip
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=8)


def compare(m, x, atol=1e-5, oracle="onnxruntime"):
    if oracle == "onnxruntime":
        want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    else:
        want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = tc.compile(m, num_threads=1)(x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=atol)


X = RNG.standard_normal((1, 2, 7, 5)).astype(np.float32)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("transform", ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"])
@pytest.mark.parametrize("scales", [[1, 1, 1.7, 0.6], [1, 1, 0.5, 2.0]])
def test_resize_modes(mode, transform, scales):
    # align_corners given scales: ONNX's reference (and its conformance cases) divide by
    # the unrounded resized length n * scale - 1, onnxruntime by the rounded one; the
    # conformance suite decides, so the reference is the oracle there.
    oracle = "reference" if transform == "align_corners" else "onnxruntime"
    compare(resize_model(X, scales=scales, mode=mode, coordinate_transformation_mode=transform), X, oracle=oracle)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_antialias_downscale_by_sizes(mode):
    compare(resize_model(X, sizes=[1, 2, 3, 2], mode=mode, antialias=1), X)


def test_resize_cubic_exclude_outside():
    compare(resize_model(X, scales=[1, 1, 1.3, 0.8], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1), X)


def test_resize_tf_crop_and_resize_extrapolates():
    roi = [0, 0, -0.2, 0.3, 1, 1, 0.9, 1.4]  # reaches outside the input: extrapolation_value there
    m = resize_model(X, roi=roi, sizes=[1, 2, 4, 6], mode="linear",
                     coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.5)  # fmt: skip
    compare(m, X)


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
def test_resize_keep_aspect_ratio(policy):
    m = resize_model(X, sizes=[11, 9], axes=[2, 3], mode="nearest", keep_aspect_ratio_policy=policy)
    compare(m, X)
