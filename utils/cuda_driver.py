"""The CUDA driver API through ctypes: what running PTX on an NVIDIA GPU needs.

Every NVIDIA driver installs `libcuda.so.1`; it loads PTX and JIT-compiles it for
the device, so tilecraft's GPU path needs no CUDA toolkit: LLVM (llvmlite) writes
the PTX, this module hands it to the driver. Only the calls tilecraft uses are
bound, each with its full C signature (`argtypes`/`restype`: a wrong width would
corrupt the call silently), through the `_v2` entry points where the driver
exports them (the unsuffixed names are the CUDA 3.x ABI, kept for old binaries).

Handles (`CUcontext`, `CUmodule`, `CUfunction`, `CUstream`, `CUevent`) are
opaque pointers; a `CUdeviceptr` is a 64-bit integer (`c_uint64`), never a
`c_void_p`, whose `None` for 0 would pass a wrong null. Every failure raises
`CudaError` with the call, the driver's name for the error and what it means;
a module the JIT rejects carries the JIT's error log.

The context is the device's *primary* context, the one the CUDA runtime (and
so PyTorch and CuPy) uses too: their device pointers are valid in it, which is
what lets `__cuda_array_interface__` arrays pass in without copies.
"""

from __future__ import annotations

import ctypes
import functools
from ctypes import POINTER, byref, c_char_p, c_float, c_int, c_size_t, c_uint, c_uint64, c_void_p
from dataclasses import dataclass

DRIVER_LIBRARY = "libcuda.so.1"

# CUdevice_attribute values (cuda.h).
MAX_THREADS_PER_BLOCK = 1
MAX_SHARED_MEMORY_PER_BLOCK = 8
WARP_SIZE = 10
MULTIPROCESSOR_COUNT = 16
COMPUTE_CAPABILITY_MAJOR = 75
COMPUTE_CAPABILITY_MINOR = 76

# CUjit_option values for cuModuleLoadDataEx.
_JIT_INFO_LOG_BUFFER = 3
_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
_JIT_ERROR_LOG_BUFFER = 5
_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
_JIT_LOG_BYTES = 16384

_CUDA_ERROR_NO_DEVICE = 100
_CUDA_ERROR_OUT_OF_MEMORY = 2

_P = POINTER
# name: (argtypes, restype is always CUresult, an int)
_SIGNATURES = {
    "cuInit": [c_uint],
    "cuDriverGetVersion": [_P(c_int)],
    "cuDeviceGetCount": [_P(c_int)],
    "cuDeviceGet": [_P(c_int), c_int],
    "cuDeviceGetName": [c_char_p, c_int, c_int],
    "cuDeviceGetAttribute": [_P(c_int), c_int, c_int],
    "cuDevicePrimaryCtxRetain": [_P(c_void_p), c_int],
    "cuDevicePrimaryCtxRelease_v2": [c_int],
    "cuCtxSetCurrent": [c_void_p],
    "cuCtxSynchronize": [],
    "cuModuleLoadDataEx": [_P(c_void_p), c_void_p, c_uint, _P(c_int), _P(c_void_p)],
    "cuModuleUnload": [c_void_p],
    "cuModuleGetFunction": [_P(c_void_p), c_void_p, c_char_p],
    "cuLaunchKernel": [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_void_p,
                       _P(c_void_p), _P(c_void_p)],  # fmt: skip
    "cuMemAlloc_v2": [_P(c_uint64), c_size_t],
    "cuMemFree_v2": [c_uint64],
    "cuMemGetInfo_v2": [_P(c_size_t), _P(c_size_t)],
    "cuMemcpyHtoD_v2": [c_uint64, c_void_p, c_size_t],
    "cuMemcpyDtoH_v2": [c_void_p, c_uint64, c_size_t],
    "cuMemcpyDtoD_v2": [c_uint64, c_uint64, c_size_t],
    "cuStreamCreate": [_P(c_void_p), c_uint],
    "cuStreamDestroy_v2": [c_void_p],
    "cuStreamSynchronize": [c_void_p],
    "cuEventCreate": [_P(c_void_p), c_uint],
    "cuEventDestroy_v2": [c_void_p],
    "cuEventRecord": [c_void_p, c_void_p],
    "cuEventSynchronize": [c_void_p],
    "cuEventElapsedTime": [_P(c_float), c_void_p, c_void_p],
    "cuGetErrorName": [c_int, _P(c_char_p)],
    "cuGetErrorString": [c_int, _P(c_char_p)],
}


class CudaError(RuntimeError):
    """A CUDA driver call failed, or there is no driver or device: the message says
    which and what to do; tilecraft's tools print it without a traceback."""


@dataclass(frozen=True)
class DeviceInfo:
    """What code generation and the launch checks need to know about a device."""

    name: str
    compute_capability: tuple[int, int]
    max_threads_per_block: int
    max_shared_memory_per_block: int
    multiprocessor_count: int
    warp_size: int

    @property
    def arch(self) -> str:
        """The PTX target of the device, e.g. "sm_90"."""
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"


class Driver:
    """The loaded driver library, initialized, with its functions bound."""

    def __init__(self, library: str = DRIVER_LIBRARY):
        try:
            self.lib = ctypes.CDLL(library)
        except OSError:
            raise CudaError(
                f"no CUDA driver: {library} not found (an NVIDIA driver installs it; "
                "compiling for target 'cuda' works without one, running does not)"
            ) from None
        for name, argtypes in _SIGNATURES.items():
            try:
                function = getattr(self.lib, name)
            except AttributeError:
                raise CudaError(f"the CUDA driver {library} lacks {name}: it is too old for tilecraft") from None
            function.argtypes = argtypes
            function.restype = c_int
        self.check("cuInit", 0)
        self._contexts: dict[int, c_void_p] = {}

    def check(self, name: str, *args, what: str = "") -> None:
        """Call `name(*args)`; a failure raises CudaError naming the call."""
        code = getattr(self.lib, name)(*args)
        if code != 0:
            raise CudaError(f"{name} failed{' (' + what + ')' if what else ''}: {self.describe(code)}")

    def describe(self, code: int) -> str:
        text, label = c_char_p(), c_char_p()
        self.lib.cuGetErrorName(code, byref(label))
        self.lib.cuGetErrorString(code, byref(text))
        name = label.value.decode() if label.value else f"CUresult {code}"
        meaning = text.value.decode() if text.value else "unknown error"
        return f"{name}: {meaning}"

    # -- devices and contexts ------------------------------------------------

    def device_count(self) -> int:
        count = c_int()
        self.check("cuDeviceGetCount", byref(count))
        return count.value

    def device(self, ordinal: int) -> int:
        """The CUdevice of `ordinal`, with the current context made its primary one."""
        count = self.device_count()
        if not 0 <= ordinal < count:
            raise CudaError(f"there is no CUDA device {ordinal}: the driver sees {count}")
        handle = c_int()
        self.check("cuDeviceGet", byref(handle), ordinal)
        if ordinal not in self._contexts:
            context = c_void_p()
            self.check("cuDevicePrimaryCtxRetain", byref(context), handle)
            self._contexts[ordinal] = context
        self.check("cuCtxSetCurrent", self._contexts[ordinal])
        return handle.value

    def info(self, ordinal: int) -> DeviceInfo:
        handle = self.device(ordinal)

        def attribute(which: int) -> int:
            value = c_int()
            self.check("cuDeviceGetAttribute", byref(value), which, handle)
            return value.value

        name = ctypes.create_string_buffer(256)
        self.check("cuDeviceGetName", name, 256, handle)
        return DeviceInfo(
            name=name.value.decode(),
            compute_capability=(attribute(COMPUTE_CAPABILITY_MAJOR), attribute(COMPUTE_CAPABILITY_MINOR)),
            max_threads_per_block=attribute(MAX_THREADS_PER_BLOCK),
            max_shared_memory_per_block=attribute(MAX_SHARED_MEMORY_PER_BLOCK),
            multiprocessor_count=attribute(MULTIPROCESSOR_COUNT),
            warp_size=attribute(WARP_SIZE),
        )

    def synchronize(self) -> None:
        self.check("cuCtxSynchronize")

    # -- modules and launches --------------------------------------------------

    def load_ptx(self, ptx: str) -> c_void_p:
        """A CUmodule JIT-compiled from PTX text; a rejected PTX raises with the JIT's log."""
        error_log = ctypes.create_string_buffer(_JIT_LOG_BYTES)
        info_log = ctypes.create_string_buffer(_JIT_LOG_BYTES)
        options = (c_int * 4)(
            _JIT_ERROR_LOG_BUFFER, _JIT_ERROR_LOG_BUFFER_SIZE_BYTES, _JIT_INFO_LOG_BUFFER, _JIT_INFO_LOG_BUFFER_SIZE_BYTES
        )
        # Sizes travel as the pointer-sized option value itself (cuda.h's convention).
        values = (c_void_p * 4)(
            ctypes.cast(error_log, c_void_p), c_void_p(_JIT_LOG_BYTES), ctypes.cast(info_log, c_void_p),
            c_void_p(_JIT_LOG_BYTES),
        )  # fmt: skip
        image = ctypes.create_string_buffer(ptx.encode() + b"\0")
        module = c_void_p()
        code = self.lib.cuModuleLoadDataEx(byref(module), image, 4, options, values)
        if code != 0:
            log = error_log.value.decode(errors="replace").strip() or "(the JIT wrote no log)"
            raise CudaError(f"the CUDA driver rejected the PTX: {self.describe(code)}\n{log}")
        return module

    def unload(self, module: c_void_p) -> None:
        self.check("cuModuleUnload", module)

    def function(self, module: c_void_p, name: str) -> c_void_p:
        handle = c_void_p()
        self.check("cuModuleGetFunction", byref(handle), module, name.encode(), what=f"kernel {name}")
        return handle

    def launch(self, function: c_void_p, name: str, grid: tuple, block: tuple, params: list, stream=None) -> None:
        """Launch a kernel. `params` are ctypes values (a c_uint64 per device
        pointer, a c_int64 per index); the driver takes an array of pointers to them."""
        pointers = (c_void_p * max(len(params), 1))(*[ctypes.addressof(p) for p in params])
        code = self.lib.cuLaunchKernel(function, *grid, *block, 0, stream, pointers, None)
        if code != 0:
            raise CudaError(
                f"launching kernel {name} with grid {_dims(grid)} and block {_dims(block)} failed: "
                f"{self.describe(code)}"
            )

    # -- memory ------------------------------------------------------------------

    def alloc(self, nbytes: int) -> int:
        pointer = c_uint64()
        code = self.lib.cuMemAlloc_v2(byref(pointer), max(nbytes, 1))
        if code == _CUDA_ERROR_OUT_OF_MEMORY:
            free, total = c_size_t(), c_size_t()
            self.lib.cuMemGetInfo_v2(byref(free), byref(total))
            raise CudaError(
                f"out of device memory: {nbytes} bytes asked, {free.value} of {total.value} free"
            )
        if code != 0:
            raise CudaError(f"cuMemAlloc_v2 failed ({nbytes} bytes): {self.describe(code)}")
        return pointer.value

    def free(self, pointer: int) -> None:
        self.check("cuMemFree_v2", pointer)

    def to_device(self, pointer: int, host: int, nbytes: int) -> None:
        self.check("cuMemcpyHtoD_v2", pointer, host, nbytes)

    def to_host(self, host: int, pointer: int, nbytes: int) -> None:
        self.check("cuMemcpyDtoH_v2", host, pointer, nbytes)

    def device_to_device(self, target: int, source: int, nbytes: int) -> None:
        self.check("cuMemcpyDtoD_v2", target, source, nbytes)

    # -- streams and events (timing) --------------------------------------------

    def event(self) -> c_void_p:
        handle = c_void_p()
        self.check("cuEventCreate", byref(handle), 0)
        return handle

    def record(self, event: c_void_p, stream=None) -> None:
        self.check("cuEventRecord", event, stream)

    def elapsed_ms(self, start: c_void_p, end: c_void_p) -> float:
        self.check("cuEventSynchronize", end)
        ms = c_float()
        self.check("cuEventElapsedTime", byref(ms), start, end)
        return ms.value

    def destroy_event(self, event: c_void_p) -> None:
        self.check("cuEventDestroy_v2", event)

    def stream(self) -> c_void_p:
        handle = c_void_p()
        self.check("cuStreamCreate", byref(handle), 0)
        return handle

    def destroy_stream(self, stream: c_void_p) -> None:
        self.check("cuStreamDestroy_v2", stream)

    def synchronize_stream(self, stream: c_void_p) -> None:
        self.check("cuStreamSynchronize", stream)


def _dims(d: tuple) -> str:
    return "(" + ", ".join(str(x) for x in d) + ")"


@functools.cache
def driver(library: str = DRIVER_LIBRARY) -> Driver:
    """The process's driver, loaded and initialized on first use."""
    return Driver(library)


def device_present(library: str = DRIVER_LIBRARY) -> str | None:
    """None when a driver and a device are there, else why not (for skips and
    for compiling without a device)."""
    try:
        count = driver(library).device_count()
    except CudaError as e:
        return str(e)
    return None if count > 0 else "the CUDA driver sees no device"


class Timer:
    """Device time between `start()` and `stop()` through CUDA events, in ms."""

    def __init__(self, library: str = DRIVER_LIBRARY):
        self.driver = driver(library)
        self.begin, self.end = self.driver.event(), self.driver.event()

    def start(self) -> None:
        self.driver.record(self.begin)

    def stop(self) -> float:
        self.driver.record(self.end)
        return self.driver.elapsed_ms(self.begin, self.end)

    def __del__(self):
        try:
            self.driver.destroy_event(self.begin)
            self.driver.destroy_event(self.end)
        except Exception:  # noqa: BLE001 (the driver may be gone at interpreter exit)
            pass
