"""`tilecraft.nd` (TVM's `tvm.nd`) and devices, as TVM's tutorials use them.

`tvm.nd.array(x, dev)` gives an `NDArray`: a numpy array (a subclass, so built
functions take it without a copy) with TVM's methods `numpy()`, `asnumpy()` and
`copyto()`. tilecraft runs on the CPU: `tvm.cpu(0)` and `tvm.device("llvm", 0)`;
its tensor accelerator (`target="accel"`) runs on a simulator that reads and writes
host memory, so its device, `tvm.ext_dev(0)` or `tvm.device("accel")` as VTA's
tutorials spell it, holds the same numpy arrays. An NVIDIA GPU is `tvm.cuda(0)`
(`tvm.device("cuda", 0)`): its arrays live in device memory (`CudaArray`,
utils/cuda_array.py, through the CUDA driver). Asking for another device is an
error that says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tilecraft.utils.unsupported import WHERE_TILECRAFT_RUNS
from tilecraft.utils.aligned import aligned_copy, aligned_empty

if TYPE_CHECKING:
    from tilecraft.utils.cuda_array import CudaArray

CPU, CUDA, EXT_DEV = 1, 2, 12  # TVM's device types (DLPack's kDLCPU, kDLCUDA, kDLExtDev)
_NAMES = {CPU: "cpu", CUDA: "cuda", EXT_DEV: "ext_dev"}


@dataclass(frozen=True)
class Device:
    """TVM's `Device`: the host CPU (`device_type` 1), an NVIDIA GPU (2) or the
    accelerator's (12, TVM's ext_dev, which VTA uses), whose arrays are host memory too."""

    device_type: int = CPU
    device_id: int = 0

    def __repr__(self) -> str:
        return f"{_NAMES[self.device_type]}({self.device_id})"

    def sync(self) -> None:
        """Wait for the GPU's work; on the CPU nothing to wait for: built functions
        return when they are done."""
        if self.device_type == CUDA:
            from tilecraft.utils.cuda_driver import driver

            driver().device(self.device_id)
            driver().synchronize()

    @property
    def exist(self) -> bool:
        """Whether the device is there (a GPU needs a driver and the device)."""
        if self.device_type != CUDA:
            return True
        from tilecraft.utils.cuda_driver import CudaError, driver

        try:
            return self.device_id < driver().device_count()
        except CudaError:
            return False


_CPU_KINDS = ("cpu", "llvm", "c", "stackvm")
_ACCEL_KINDS = ("accel", "ext_dev", "vta")
_CUDA_KINDS = ("cuda", "gpu")


def cpu(dev_id: int = 0) -> Device:
    return Device(CPU, dev_id)


def cuda(dev_id: int = 0) -> Device:
    """An NVIDIA GPU (`tvm.cuda(0)`); the driver is needed only to use it."""
    return Device(CUDA, dev_id)


def ext_dev(dev_id: int = 0) -> Device:
    """The accelerator's device (`tvm.ext_dev(0)`, as VTA's tutorials use it)."""
    return Device(EXT_DEV, dev_id)


def device(dev_type="cpu", dev_id: int = 0) -> Device:
    """`tvm.device("llvm", 0)`, `tvm.device("cpu")`, or the accelerator's
    `tvm.device("accel")` (also "ext_dev"), or an NVIDIA GPU's, `tvm.device("cuda", 0)`."""
    if isinstance(dev_type, Device):
        return dev_type
    kind = str(dev_type).split()[0] if isinstance(dev_type, str) and dev_type.split() else dev_type
    if kind in _CPU_KINDS or kind == CPU:
        return Device(CPU, dev_id)
    if kind in _ACCEL_KINDS or kind == EXT_DEV:
        return Device(EXT_DEV, dev_id)
    if kind in _CUDA_KINDS or kind == CUDA:
        return Device(CUDA, dev_id)
    raise ValueError(f"there is no device {dev_type!r}: {WHERE_TILECRAFT_RUNS}")


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
        if type(target).__name__ == "CudaArray":  # (a GPU array: utils/cuda_array.py)
            return target.copyfrom(self)
        if not isinstance(target, np.ndarray):
            raise ValueError(f"copyto takes an NDArray or a device, not {type(target).__name__}")
        if target.shape != self.shape or target.dtype != self.dtype:
            raise ValueError(
                f"copyto: shape/dtype mismatch, {self.dtype}{list(self.shape)} into "
                f"{target.dtype}{list(target.shape)}"
            )
        np.copyto(target, self)
        return target


def array(data, device: Device | None = None) -> NDArray | CudaArray:
    """`tvm.nd.array(numpy_array, dev)`: a C-contiguous copy in host memory (the
    accelerator's simulator reads it there too), starting on a cache line (as TVM's
    allocator does: utils/aligned.py). On a GPU (`device=tvm.cuda(0)`): a
    `CudaArray` in its memory."""
    if device is not None and not isinstance(device, Device):
        raise ValueError(f"tvm.nd.array takes a device such as tvm.cpu(0), not {device!r}")
    if type(data).__name__ == "CudaArray":  # (a GPU array: utils/cuda_array.py)
        data = data.numpy()
    if device is not None and device.device_type == CUDA:
        from tilecraft.utils.cuda_array import CudaArray

        return CudaArray.from_numpy(np.asarray(data), device.device_id)
    return aligned_copy(np.asarray(data)).view(NDArray)


def empty(shape, dtype="float32", device: Device | None = None) -> NDArray | CudaArray:
    """`tvm.nd.empty(shape, dtype, dev)`: an uninitialized array on a cache line
    (or in a GPU's memory)."""
    if device is not None and device.device_type == CUDA:
        from tilecraft.utils.cuda_array import CudaArray

        return CudaArray.empty(tuple(shape), dtype, device.device_id)
    return aligned_empty(tuple(shape), dtype).view(NDArray)
