"""Loop features for the cost model (autotune/features.py) on known loop nests."""

from __future__ import annotations

import functools
import json
import math

import numpy as np
import pytest

from tilecraft import te
from tilecraft.api import lower_module
from tilecraft.autotune.features import ACCESSES, GLOBAL, LENGTH, LEVELS, PER_LEVEL, features

# The two conv2d space tests share one lowering of every config: keep them together.
pytestmark = pytest.mark.xdist_group("tuning_features")


def matmul(n=64, tile=None, vectorize=False, parallel=False):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    s = te.create_schedule(C)
    i, j = s[C].op.axis
    if tile:
        io, jo, ii, ji = s[C].tile(i, j, tile, tile)
        if vectorize:
            s[C].vectorize(ji)
        if parallel:
            s[C].parallel(io)
    return lower_module(s, [A, B, C])


def access(vector, rank):
    """The features of the rank-th kept access: LEVELS x PER_LEVEL."""
    start = GLOBAL + rank * LEVELS * PER_LEVEL
    return vector[start : start + LEVELS * PER_LEVEL].reshape(LEVELS, PER_LEVEL)


def test_fixed_length_and_known_values_of_a_naive_matmul():
    v = features(matmul(64))
    assert v.shape == (LENGTH,) and v.dtype == np.float32
    # i, j, k loops: four accesses 64^3 times (load A, load B, load C, store C) and the
    # reduction's init store 64^2 times
    assert v[0] == np.float32(math.log2(1 + 4 * 64**3 + 64**2))
    store = access(v, 0)  # the store C[i, j] inside k, executed 64^3 times
    # innermost level k: length 64, C[i, j] does not move with k: touched 4 bytes, reuse 64
    assert store[0, 0] == np.float32(math.log2(65))
    assert store[0, 1] == np.float32(math.log2(5))
    assert store[0, 2] == np.float32(math.log2(1 + 64 / 4))
    assert store[0, 3] == 0.0  # stride 0 along k
    assert list(store[0, 4:]) == [1.0, 0.0, 0.0, 0.0]  # serial
    # level j: stride 1, touched 64 floats
    assert store[1, 3] == np.float32(math.log2(2)) and store[1, 1] == np.float32(math.log2(1 + 256))


def test_schedules_give_different_vectors():
    naive, tiled = features(matmul(64)), features(matmul(64, tile=16))
    vec, par = features(matmul(64, tile=16, vectorize=True)), features(matmul(64, tile=16, vectorize=True, parallel=True))
    assert not np.array_equal(naive, tiled) and not np.array_equal(tiled, vec) and not np.array_equal(vec, par)
    assert par[3] == np.float32(math.log2(1 + 4))  # the parallel io loop of extent 4
    kinds = access(vec, 0)[:, 4:]
    assert kinds[:, 2].max() == 1.0  # some level is vectorized


def test_fewer_accesses_than_slots_pad_with_zeros():
    A = te.placeholder((8,), "float32", name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    v = features(lower_module(te.create_schedule(B), [A, B]))
    assert v.shape == (LENGTH,)
    assert not v[GLOBAL + 2 * LEVELS * PER_LEVEL :].any()  # two accesses: the rest is zeros
    assert ACCESSES >= 2


# A small blocked conv2d workload (the `conv2d` template's params): 32 -> 64 channels
# in 16-lane blocks, 3x3, 8x8, so its space has row, order, unroll_rx and parallel.
CONV = ([1, 2, 8, 8, 16], [4, 2, 3, 3, 16, 16], [1, 1], [1, 1, 1, 1], [1, 1], 1, "NCHW16c", "OIHW16i16o", "NCHW16c")


def key(config: dict) -> str:
    return json.dumps(config, sort_keys=True)


@functools.cache
def _conv_configs_and_ir():
    """Lowered once per worker (~20 s; two tests read it). The space, and (config, lowered module, its text) for every direct config (the Winograd
    knobs at their first values), every Winograd config (the direct knobs at theirs)
    and a few configs that move a knob their algorithm does not use."""
    import itertools

    from tilecraft.autotune.templates import get_template, lower

    space = get_template("conv2d").space(*CONV)
    first = {k: v[0] for k, v in space.knobs.items()}
    direct = {k: v for k, v in space.knobs.items() if not k.startswith("winograd_") and k != "algorithm"}
    winograd = {k: v for k, v in space.knobs.items() if k.startswith("winograd_")}
    every = [first | dict(zip(direct, vs)) | {"algorithm": "direct"} for vs in itertools.product(*direct.values())]
    every += [first | dict(zip(winograd, vs)) | {"algorithm": "winograd"} for vs in itertools.product(*winograd.values())]
    every += [
        first | {"algorithm": "winograd", "tile": space.knobs["tile"][-1]},
        first | {"algorithm": "winograd", "winograd_split": 2, "parallel": 1},
        first | {"algorithm": "direct", "winograd_tile": space.knobs["winograd_tile"][-1]},
        first | {"algorithm": "direct", "winograd_parallel": 1, "tile": space.knobs["tile"][-1]},
    ]
    lowered = [(c, lower("conv2d", CONV, c, verify=False)) for c in every]
    return space, [(c, m, str(m)) for c, m in lowered]  # (printing them all: ~2 s)


def test_conv2d_configs_with_different_loop_nests_give_different_vectors():
    # The knobs that act outside the innermost LEVELS loops (the conv's parallel row
    # loop, while the padding stage's parallel loop is the largest; an unrolled
    # window loop outside the channel loops) must still show, or the cost model
    # cannot rank those configs.
    _, lowered = _conv_configs_and_ir()
    by_text: dict[str, np.ndarray] = {}
    for _, module, text in lowered:
        by_text.setdefault(text, features(module))
    vectors = {v.tobytes() for v in by_text.values()}
    assert len(by_text) > 50 and len(vectors) == len(by_text)
    features_of = {key(c): v for c, v in ((c, features(m)) for c, m, _ in lowered)}
    find = lambda c: features_of[key(c)]  # noqa: E731
    base = {"tile": [2, 8], "row": 0, "order": 1, "unroll_rx": 0, "parallel": 1, "algorithm": "direct"}
    base |= {"winograd_tile": [1, 1], "winograd_split": 1, "winograd_parallel": 0}
    assert not np.array_equal(find(base), find({**base, "parallel": 0}))
    assert not np.array_equal(find(base), find({**base, "unroll_rx": 1}))
    assert find(base)[4] > find({**base, "parallel": 0})[4]  # share of work under parallel loops
    # each Winograd knob alone
    wbase = {**base, "tile": [1, 1], "order": 0, "parallel": 0, "algorithm": "winograd"}
    wbase |= {"winograd_tile": [2, 2], "winograd_split": 1, "winograd_parallel": 1}
    for knob, value in (("winograd_tile", [2, 4]), ("winograd_tile", [4, 2]), ("winograd_split", 2), ("winograd_parallel", 0)):
        assert not np.array_equal(find(wbase), find({**wbase, knob: value})), knob


def test_conv2d_space_holds_no_two_configs_of_one_loop_nest():
    # row = 1 or 2 fixes the reduction order: order = 1 would repeat order = 0
    from tilecraft.autotune.templates import get_template

    space, lowered = _conv_configs_and_ir()
    kept = [(c, text) for c, _, text in lowered if space.contains(c)]
    assert len({text for _, text in kept}) == len(kept) == space.size
    dropped = [(c, text) for c, _, text in lowered if not space.contains(c)]
    # (and each algorithm leaves the other's knobs unused: only their first values are
    # kept); a dropped config's normal form is a point of the space with its loop nest
    first = {k: v[0] for k, v in space.knobs.items()}
    unused = lambda c: any(  # noqa: E731
        c[k] != first[k] for k in c if k != "algorithm" and k.startswith("winograd_") != (c["algorithm"] == "winograd")
    )
    assert len(dropped) > 4 and all((c["row"] and c["order"] == 1) or unused(c) for c, _ in dropped)
    by_config = {key(c): text for c, text in kept}
    for c, text in dropped:
        normal = space.normalize(c)
        assert space.contains(normal) and by_config[key(normal)] == text
    winograd = [c for c, _ in kept if c["algorithm"] == "winograd"]
    assert len(winograd) == math.prod(len(v) for k, v in space.knobs.items() if k.startswith("winograd_"))
    assert space.contains(get_template("conv2d").default_config(*CONV))
