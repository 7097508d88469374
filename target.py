"""`tilecraft.target.Target`: TVM's target objects, for the one target here (llvm)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TargetKind:
    name: str


class Target:
    """`tvm.target.Target("llvm")` or `Target(target="llvm", host="llvm")`; options
    after the kind (`llvm -mcpu=...`) are accepted and the host CPU is used."""

    def __init__(self, target="llvm", host=None):
        text = target.text if isinstance(target, Target) else str(target)
        kind = text.split()[0] if text.split() else ""
        if kind != "llvm":
            raise ValueError(f"unknown target {text!r}: tilecraft builds for target 'llvm' (the host CPU)")
        if host is not None and Target(host).kind.name != "llvm":
            raise ValueError(f"tilecraft's host target is 'llvm', not {host!r}")
        self.text = text
        self.kind = TargetKind(kind)
        self.host = self if host is None else None

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Target({self.text!r})"


def resolve(target) -> Target:
    """A Target from what `tvm.build` accepts: None, a string or a Target."""
    if target is None:
        return Target("llvm")
    return target if isinstance(target, Target) else Target(target)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    from tilecraft.compat import UnsupportedError

    raise UnsupportedError(f"tvm.target.{name} is not supported by tilecraft (it has Target, for 'llvm')")
