"""`tilecraft.nd` and devices, as TVM's tutorials use them.

`tvm.nd.array(x, dev)` gives an `NDArray`: a numpy array (a subclass, so built
functions take it without a copy) with TVM's methods `numpy()`, `asnumpy()` and
`copyto()`. tilecraft runs on the CPU only: `tvm.cpu(0)` and
`tvm.device("llvm", 0)` are the one device; asking for another is an error
that says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilecraft.utils.aligned import aligned_copy, aligned_empty


@dataclass(frozen=True)
class Device:
    """The host CPU (TVM's `Device`): `device_type` 1, as in TVM."""

    device_type: int = 1
    device_id: int = 0

    def __repr__(self) -> str:
        return f"cpu({self.device_id})"

    def sync(self) -> None:
        """Nothing to wait for: built functions return when they are done."""


_CPU_KINDS = ("cpu", "llvm", "c", "stackvm")


def cpu(dev_id: int = 0) -> Device:
    return Device(1, dev_id)


def device(dev_type="cpu", dev_id: int = 0) -> Device:
    """`tvm.device("llvm", 0)` or `tvm.device("cpu")`; only CPU devices exist here."""
    if isinstance(dev_type, Device):
        return dev_type
    kind = str(dev_type).split()[0] if isinstance(dev_type, str) else dev_type
    if kind in _CPU_KINDS or kind == 1:
        return Device(1, dev_id)
    raise ValueError(f"tilecraft runs on the CPU only; there is no device {dev_type!r}")


class NDArray(np.ndarray):
    """A numpy array with TVM's NDArray methods."""

    @property
    def device(self) -> Device:
        return cpu(0)

    def numpy(self) -> np.ndarray:
        """A plain numpy copy, as TVM's `NDArray.numpy()`."""
        return np.array(self, copy=True).view(np.ndarray)

    asnumpy = numpy

    def copyfrom(self, source) -> NDArray:
        np.copyto(self, np.asarray(source), casting="no")
        return self

    def copyto(self, target):
        """Copy into `target` (an NDArray of the same shape and dtype), or onto a
        device (a new NDArray)."""
        if isinstance(target, Device):
            return array(self, target)
        if not isinstance(target, np.ndarray):
            raise ValueError(f"copyto takes an NDArray or a device, not {type(target).__name__}")
        if target.shape != self.shape or target.dtype != self.dtype:
            raise ValueError(
                f"copyto: shape/dtype mismatch, {self.dtype}{list(self.shape)} into "
                f"{target.dtype}{list(target.shape)}"
            )
        np.copyto(target, self)
        return target


def array(data, device: Device | None = None) -> NDArray:
    """`tvm.nd.array(numpy_array, dev)`: a C-contiguous copy on the CPU, starting on
    a cache line (as TVM's allocator does: utils/aligned.py)."""
    if device is not None and not isinstance(device, Device):
        raise ValueError(f"tvm.nd.array takes a device such as tvm.cpu(0), not {device!r}")
    return aligned_copy(np.asarray(data)).view(NDArray)


def empty(shape, dtype="float32", device: Device | None = None) -> NDArray:
    """`tvm.nd.empty(shape, dtype, dev)`: an uninitialized array on a cache line."""
    return aligned_empty(tuple(shape), dtype).view(NDArray)
