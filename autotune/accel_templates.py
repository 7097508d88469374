"""The accelerator's tuning template: `conv2d_accel`'s tile sizes and virtual threads.

Parameters (JSON-able, `topi.accel_conv2d.conv2d_params`): data shape [N, C, H, W],
kernel shape [O, C, KH, KW], strides, pads [top, left, bottom, right], the
requantizing shift, relu, and the spec as the keys where it differs from VTA's
default (`{}`: the default). Knobs:

- `tile_h`, `tile_w`: the output tile, divisors of OH and OW;
- `tile_oc`: output-channel blocks a tile computes, `tile_ic`: input-channel blocks
  loaded at once (divisors of the block counts, at most 16);
- `threads`: virtual threads over the output-channel tiles (1 or 2), which must
  split them evenly.

A config whose tiles do not fit the input, weight or accumulator buffer
(`backends/accel/spec.py` `buffer_use`) is outside the space (the `Space`'s constraint), so it
costs no trial; `measure` refuses one anyway with the buffer it overflows. Config
None is the untuned default (`accel_conv2d.default_config`, what tc.compile(...,
target="accel") uses without a tuning log).

`measure` builds the config for target "accel", runs it on the cycle-level
simulator with random int8 data, weights and bias, checks the output bit for bit
against `conv2d_reference` (a mismatch is an AssertionError: an error record) and
returns the simulated time, cycles at the spec's clock (`AccelSpec.seconds`), once:
the simulator is deterministic.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

from tilecraft.autotune.explore import Space
from tilecraft.backends.accel.spec import buffer_use
from tilecraft.autotune.templates import Template, register_template

__all__ = ["Conv2dAccel", "measure", "spec_path"]


def _spec(overrides: dict):
    from tilecraft.backends.accel.spec import default_spec, spec_from_dict

    return spec_from_dict({**default_spec().to_dict(), **overrides}, "conv2d_accel spec") if overrides \
        else default_spec()  # fmt: skip


def spec_path(overrides: dict) -> str:
    """A spec file for the accelerator passes ("" for the default): written once into
    the temporary directory, named by its content."""
    if not overrides:
        return ""
    spec = _spec(overrides)
    text = json.dumps(spec.to_dict(), sort_keys=True)
    path = Path(tempfile.gettempdir()) / f"tilecraft-accel-spec-{hashlib.sha1(text.encode()).hexdigest()[:16]}.json"
    if not path.exists():
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text)
        partial.replace(path)  # atomic: parallel workers never read half a file
    return str(path)


def _divisors(n: int, limit: int | None = None) -> tuple[int, ...]:
    return tuple(d for d in range(1, n + 1) if n % d == 0 and (limit is None or d <= limit))


class Conv2dAccel(Template):
    """conv2d + bias + relu + requantize on the accelerator (topi/accel_conv2d.py)."""

    name = "conv2d_accel"
    target = "accel"
    measure_job = "tilecraft.autotune.accel_templates:measure"

    def space(self, data_shape, kernel_shape, strides, pads, shift, relu, spec) -> Space:
        from tilecraft.topi import accel_conv2d as ac

        machine = _spec(spec)
        oh, ow = ac.output_size(data_shape, kernel_shape, strides, pads)
        blocks_out, blocks_in = kernel_shape[0] // machine.block, data_shape[1] // machine.block
        return Space(
            {"tile_h": _divisors(oh), "tile_w": _divisors(ow), "tile_oc": _divisors(blocks_out, 16),
             "tile_ic": _divisors(blocks_in, 16), "threads": (1, 2)},
            valid=lambda c: self.problem(data_shape, kernel_shape, strides, pads, c, machine) is None,
        )  # fmt: skip

    @staticmethod
    def problem(data_shape, kernel_shape, strides, pads, config: dict, machine) -> str | None:
        """Why `config` cannot run (None: it can): threads that do not split the
        output-channel tiles evenly (two threads of one tile is one thread: the same
        config twice), a store inject-dma cannot make one DMA, an overflowing buffer."""
        from tilecraft.topi import accel_conv2d as ac

        blocks_out = kernel_shape[0] // machine.block
        if blocks_out % (config["tile_oc"] * config["threads"]):
            return (f"{config['threads']} threads of tile_oc {config['tile_oc']} do not split the "
                    f"{blocks_out} output-channel blocks evenly")  # fmt: skip
        oh, ow = ac.output_size(data_shape, kernel_shape, strides, pads)
        th, tw = config["tile_h"], config["tile_w"]
        in_h, in_w = (th - 1) * strides[0] + kernel_shape[2], (tw - 1) * strides[1] + kernel_shape[3]
        for what, blocks, rows, columns, width in (("output", config["tile_oc"], th, tw, ow),
                                                   ("input", config["tile_ic"], in_h, in_w, data_shape[3])):
            # inject-dma moves 2-D blocks of contiguous rows: one column of several rows
            # of several channel blocks is three strided dimensions
            if columns == 1 < width and rows > 1 and blocks > 1:
                return f"the {what} tile (one column of {rows} rows, {blocks} channel blocks) is not one DMA"
        for buffer, (need, depth) in buffer_use(data_shape, kernel_shape, strides, config, machine).items():
            if need > depth:
                return f"the tiles need {need} {buffer} elements; it holds {depth}"
        return None

    def default_config(self, data_shape, kernel_shape, strides, pads, shift, relu, spec) -> dict:
        from tilecraft.topi import accel_conv2d as ac

        return ac.default_config(data_shape, kernel_shape, strides, pads, _spec(spec))

    def schedule(self, data_shape, kernel_shape, strides, pads, shift, relu, spec, config: dict | None):
        """(schedule, [data, kernel, bias, out]) in the packed layouts; ValueError for a
        config outside the space, saying why."""
        from tilecraft.topi import accel_conv2d as ac

        params = (data_shape, kernel_shape, strides, pads, shift, relu, spec)
        space = self.space(*params)
        if config is None:  # the heuristic's config: the passes judge it, as without tuning
            config = self.default_config(*params)
        elif not space.contains(config):
            chosen = set(config) == set(space.knobs) and all(config[n] in v for n, v in space.knobs.items())
            why = self.problem(data_shape, kernel_shape, strides, pads, config, _spec(spec)) if chosen \
                else f"its knobs must be {', '.join(f'{n} in {list(v)}' for n, v in space.knobs.items())}"
            raise ValueError(f"config {json.dumps(config, sort_keys=True)} is not in conv2d_accel's space: {why}")
        return ac.conv2d_accel(data_shape, kernel_shape, strides, pads, shift, relu=relu, spec=_spec(spec), **config)

    def flops(self, data_shape, kernel_shape, strides, pads, shift, relu, spec) -> float:
        from tilecraft.topi import accel_conv2d as ac

        oh, ow = ac.output_size(data_shape, kernel_shape, strides, pads)
        o, c, kh, kw = kernel_shape
        return 2.0 * data_shape[0] * o * oh * ow * c * kh * kw


CONV2D_ACCEL = register_template(Conv2dAccel())


def run(params, config: dict | None, seed: int = 0):
    """Build and simulate `config` on random int8 inputs; (SimResult, bit-exact?)."""
    from tilecraft.runtime.accel import build_accel
    from tilecraft.topi import accel_conv2d as ac

    data_shape, kernel_shape, strides, pads, shift, relu, spec = params
    machine = _spec(spec)
    s, args = CONV2D_ACCEL.schedule(*params, config=config)
    path = spec_path(spec)
    f = build_accel(s, args, spec_path=path)
    rng = np.random.default_rng(seed)
    x = rng.integers(-128, 128, data_shape).astype(np.int8)
    w = rng.integers(-128, 128, kernel_shape).astype(np.int8)
    o = kernel_shape[0]
    bias = rng.integers(-(1 << 14), 1 << 14, o).astype(np.int32)
    packed_bias = np.ascontiguousarray(np.broadcast_to(bias.reshape(o // machine.block, 1, machine.block),
                                                       (o // machine.block, machine.batch, machine.block)))
    out = np.zeros([int(d) for d in args[3].shape], np.int8)
    result = f(ac.pack_data(x, machine.batch, machine.block), ac.pack_kernel(w, machine.block, machine.block),
               packed_bias, out)
    expected = ac.conv2d_reference(x, w, strides, pads, shift=shift, bias=bias, relu=relu)
    got = ac.unpack_result(out)
    return result, got, expected


def measure(template: str, shape: list, config: dict | None, repeat: int = 1, seed: int = 0,
            cold: bool = True, cutoff: float | None = None) -> list[float]:  # fmt: skip
    """[simulated seconds] of the config (one run: the simulator is deterministic, so
    `repeat` is not used, nor `cold`: its cycle count has no host caches in it, nor
    `cutoff`: one run is all a config gets anyway);
    AssertionError when its output differs from numpy's."""
    if template != CONV2D_ACCEL.name:
        raise ValueError(f"accel_templates.measure measures conv2d_accel, not {template!r}")
    params = tuple(shape)
    result, got, expected = run(params, config, seed)
    if not np.array_equal(got, expected):
        raise AssertionError(f"wrong answer: {int(np.sum(got != expected))} of {got.size} outputs differ "
                             f"from conv2d_reference")  # fmt: skip
    return [_spec(params[-1]).seconds(result.cycles)]
