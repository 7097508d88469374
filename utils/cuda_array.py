"""Arrays in CUDA device memory: what `tc.nd.array(x, device=tc.cuda(0))` gives.

A `CudaArray` owns (or, wrapping another library's tensor, borrows) one
contiguous allocation in the device's primary context. It speaks TVM's NDArray
methods (`numpy()`, `copyto`, `copyfrom`, `shape`, `dtype`, `device`) and
Numba's `__cuda_array_interface__` (version 3) both ways: it exposes one, and
`as_cuda_array(obj)` wraps any object that exposes one (a PyTorch or CuPy
tensor) without a copy, keeping the object alive. Such a tensor must be
C-contiguous: built kernels address their buffers row-major.
"""

from __future__ import annotations

import numpy as np

from tilecraft.utils.cuda_driver import DRIVER_LIBRARY, CudaError, driver

CUDA = 2  # TVM's device type (DLPack's kDLCUDA)


class CudaArray:
    """A C-contiguous array in device memory."""

    def __init__(self, pointer: int, shape: tuple, dtype, device_id: int = 0, owner=None, library=DRIVER_LIBRARY):
        self.pointer = pointer
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.device_id = device_id
        self._owner = owner  # the borrowed object, or None: this array frees its memory
        self._driver = driver(library)

    @classmethod
    def empty(cls, shape, dtype: str | np.dtype = "float32", device_id: int = 0) -> CudaArray:
        d = driver()
        d.device(device_id)
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        return cls(d.alloc(nbytes), tuple(shape), dtype, device_id)

    @classmethod
    def from_numpy(cls, data, device_id: int = 0) -> CudaArray:
        host = np.ascontiguousarray(data)
        array = cls.empty(host.shape, host.dtype, device_id)
        array.copyfrom(host)
        return array

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def device(self):
        from tilecraft.utils.ndarray import Device

        return Device(CUDA, self.device_id)

    def numpy(self) -> np.ndarray:
        """A host copy (TVM's `NDArray.numpy()`)."""
        host = np.empty(self.shape, self.dtype)
        if self.nbytes:
            self._driver.device(self.device_id)
            self._driver.to_host(host.ctypes.data, self.pointer, self.nbytes)
        return host

    asnumpy = numpy

    def copyfrom(self, source) -> CudaArray:
        """Fill from a host array or another device array of the same shape and dtype."""
        if isinstance(source, CudaArray):
            self._same_layout(source, "copyfrom")
            self._driver.device_to_device(self.pointer, source.pointer, self.nbytes)
            return self
        host = np.ascontiguousarray(source)
        self._same_layout(host, "copyfrom")
        if self.nbytes:
            self._driver.device(self.device_id)
            self._driver.to_device(self.pointer, host.ctypes.data, self.nbytes)
        return self

    def copyto(self, target):
        """Copy into `target` (a host or device array of the same shape and dtype),
        or onto a device (a new array there)."""
        from tilecraft.utils.ndarray import Device, array

        if isinstance(target, Device):
            return array(self.numpy(), target) if target.device_type != CUDA else self._clone(target.device_id)
        if isinstance(target, CudaArray):
            target.copyfrom(self)
            return target
        if isinstance(target, np.ndarray):
            self._same_layout(target, "copyto")
            np.copyto(target, self.numpy())
            return target
        raise ValueError(f"copyto takes an NDArray, a device array or a device, not {type(target).__name__}")

    def _clone(self, device_id: int) -> CudaArray:
        if device_id != self.device_id:
            return CudaArray.from_numpy(self.numpy(), device_id)
        copy = CudaArray.empty(self.shape, self.dtype, device_id)
        return copy.copyfrom(self)

    def _same_layout(self, other, what: str) -> None:
        if tuple(other.shape) != self.shape or np.dtype(other.dtype) != self.dtype:
            raise ValueError(
                f"{what}: shape/dtype mismatch, {self.dtype}{list(self.shape)} and "
                f"{np.dtype(other.dtype)}{list(other.shape)}"
            )

    @property
    def __cuda_array_interface__(self) -> dict:
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.pointer, False),
            "strides": None,
            "version": 3,
        }

    def __repr__(self) -> str:
        return f"<CudaArray {self.dtype}{list(self.shape)} on cuda({self.device_id})>"

    def __del__(self):
        if self._owner is None and getattr(self, "pointer", 0):
            try:
                self._driver.free(self.pointer)
            except Exception:  # noqa: BLE001 (the driver may be gone at interpreter exit)
                pass


def as_cuda_array(obj, device_id: int = 0) -> CudaArray:
    """`obj` itself if a CudaArray, else a view of an object exposing
    `__cuda_array_interface__` (no copy; `obj` stays alive with the view)."""
    if isinstance(obj, CudaArray):
        return obj
    interface = obj.__cuda_array_interface__
    shape = tuple(interface["shape"])
    dtype = np.dtype(interface["typestr"])
    strides = interface.get("strides")
    if strides is not None and tuple(strides) != _c_strides(shape, dtype.itemsize):
        raise ValueError(
            f"a {type(obj).__name__} with strides {tuple(strides)} is not C-contiguous; "
            "pass a contiguous copy (torch: .contiguous())"
        )
    if interface.get("mask") is not None:
        raise ValueError("masked __cuda_array_interface__ arrays are not supported")
    pointer, _read_only = interface["data"]
    if interface.get("stream") not in (None, 1, 2):
        # The producer may still be writing on its own stream (protocol v3): wait for it.
        driver().synchronize()
    return CudaArray(pointer or 0, shape, dtype, device_id, owner=obj)


def _c_strides(shape: tuple, itemsize: int) -> tuple:
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def check_driver_array(value) -> bool:
    """Whether a call argument lives on a CUDA device (our array or a foreign one)."""
    return isinstance(value, CudaArray) or hasattr(value, "__cuda_array_interface__")


__all__ = ["CUDA", "CudaArray", "CudaError", "as_cuda_array", "check_driver_array"]
