"""`tilecraft.target.Target`: TVM's target objects, for tilecraft's two targets.

- `llvm`: the host CPU, through LLVM (`llvm -mcpu=...` and other options after the
  kind are accepted; code is always generated for the host CPU).
- `accel`: the tensor accelerator (a VTA-like ISA), run on its simulator:
  `accel -spec=FILE` reads another hardware spec, `accel -force-serial` (or
  `-serial`) turns latency hiding off (insert-dependences{serial=true}).

- `cuda`: an NVIDIA GPU through the CUDA driver; `cuda -arch=sm_90` names the
  architecture to generate PTX for (else the device's, or sm_80 without a driver).

`tc.build(s, args, target=...)` and `tc.compile(model, target=...)` take a string or
a `Target`; both go through `resolve`, so the two spellings agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilecraft.utils.unsupported import WHERE_TILECRAFT_RUNS

KINDS = {
    "llvm": "the host CPU, through LLVM",
    "accel": "the tensor accelerator, on its simulator",
    "cuda": "an NVIDIA GPU, through the CUDA driver",
}
ACCEL_OPTIONS = "-spec=FILE, -force-serial"


@dataclass(frozen=True)
class TargetKind:
    name: str


class Target:
    """`tvm.target.Target("llvm")`, `Target("accel -spec=vta.json")` or
    `Target(target="llvm", host="llvm")`. The host (where the accelerator's driver
    and the CPU kernels run) is always the CPU: `llvm`."""

    def __init__(self, target="llvm", host=None):
        text = target.text if isinstance(target, Target) else str(target)
        words = text.split()
        kind = words[0] if words else ""
        if kind not in KINDS:
            raise ValueError(f"unknown target {text!r}: {WHERE_TILECRAFT_RUNS}")
        self.text = text
        self.kind = TargetKind(kind)
        self.spec = ""  # accel: the hardware spec file ("": the default spec)
        self.serial = False  # accel: latency hiding off
        self.arch: str | None = None  # cuda: the architecture ("sm_90"), None: the device's
        if kind == "accel":
            for option in words[1:]:
                if option.startswith("-spec="):
                    self.spec = option[len("-spec=") :]
                elif option in ("-serial", "-force-serial"):
                    self.serial = True
                else:
                    raise ValueError(f"unknown accel target option {option!r} ({ACCEL_OPTIONS})")
        if kind == "cuda":
            from tilecraft.backends.nvptx import parse_arch

            for option in words[1:]:
                if option.startswith("-arch="):
                    self.arch = parse_arch(option[len("-arch=") :])
                else:
                    raise ValueError(f"unknown cuda target option {option!r} (-arch=sm_XX)")
        if host is not None and Target(host).kind.name != "llvm":
            raise ValueError(f"tilecraft's host target is 'llvm' (the CPU), not {str(host)!r}")
        self.host = Target(host) if host is not None else (self if kind == "llvm" else Target("llvm"))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Target({self.text!r})"


def resolve(target) -> Target:
    """A Target from what `tvm.build` accepts: None (llvm), a string or a Target."""
    if target is None:
        return Target("llvm")
    return target if isinstance(target, Target) else Target(target)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    from tilecraft.utils.unsupported import UnsupportedError

    raise UnsupportedError(f"tvm.target.{name} is not supported by tilecraft (it has Target, for 'llvm', 'accel' and 'cuda')")
