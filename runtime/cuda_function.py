"""`CudaFunction`: what `tilecraft.build(s, args, target="cuda")` returns.

Compiling needs no GPU: the schedule is lowered to loops (`tc.lower` shows
them), `convert-loop-to-gpu` outlines the bound loop nests into kernels,
`insert-gpu-barriers` separates the writes and reads of shared memory,
`convert-gpu-to-nvvm` lowers the kernels to LLVM IR and `backends/nvptx` writes
PTX (`f.get_source("ptx")`). What is left of the host function is a list of
launches, each a kernel, its grid and block and the function arguments it takes;
this object holds that list and carries it out from Python through the CUDA
driver (utils/cuda_driver.py), which JIT-compiles the PTX on first call.

Calling convention: `f(*arrays)` in the order of `args`, as the CPU's `Function`:
device arrays (`tc.nd.array(x, device=tc.cuda(0))`, or any object with
`__cuda_array_interface__`: a PyTorch or CuPy tensor, without a copy), or numpy
arrays, which are copied to the device and the outputs back (with a warning,
once: the copies usually cost more than the kernels). The call returns when the
kernels are done.
"""

from __future__ import annotations

import warnings
from ctypes import c_uint64
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, func, gpu
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp

from tilecraft.backends.nvptx import device_module, emit_ptx
from tilecraft.backends.nvptx.codegen import llvm_ir
from tilecraft.driver.context import make_context
from tilecraft.driver.te_pieces import cut_ops, lower_module
from tilecraft.frontends import te
from tilecraft.frontends.te.symbolic import Var
from tilecraft.frontends.te.tensor import ComputeOp
from tilecraft.lowering.convert_gpu_to_nvvm import ARGUMENT_ALIGNMENT, ConvertGpuToNvvmPass
from tilecraft.lowering.convert_loop_to_gpu import ConvertLoopToGpuPass
from tilecraft.transforms.insert_gpu_barriers import InsertGpuBarriersPass
from tilecraft.utils.cuda_array import CudaArray, as_cuda_array
from tilecraft.utils.cuda_driver import driver
from tilecraft.utils.diagnostics import OpError
from tilecraft.utils.dtypes import numpy_dtype

_warned_host_arrays = False


@dataclass(frozen=True)
class Launch:
    """One kernel launch of the host function: which arguments it takes (their
    positions in the loop function's parameters)."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    params: tuple[int, ...]

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]


class PtxModule:
    """TVM's imported device module: `f.imported_modules[0].get_source()` is the PTX."""

    type_key = "cuda"

    def __init__(self, ptx: str):
        self.ptx = ptx

    def get_source(self, fmt: str = "") -> str:
        if fmt not in ("", "ptx", "cuda"):
            raise ValueError(f"the CUDA module's source is PTX; get_source({fmt!r}) is not available")
        return self.ptx


class CudaFunction:
    """A te schedule compiled to PTX kernels and the launches that run them."""

    def __init__(self, s: te.Schedule, args: list, name: str, arch: str, device_id: int = 0):
        if any(isinstance(a, Var) for a in args) or cut_ops(args) is not None:
            raise ValueError(
                f"{name}: target 'cuda' builds computations of static shape without te.var, "
                "te.extern or te.scan for now"
            )
        self.entry_name, self.arch, self.device_id = name, arch, device_id
        self._args = args
        is_input = [not isinstance(a.op, ComputeOp) for a in args]
        # The loop function takes the inputs, then the outputs (runtime/function.py).
        self._order = [n for n, i in enumerate(is_input) if i] + [n for n, i in enumerate(is_input) if not i]
        self._outputs = {n for n, i in enumerate(is_input) if not i}
        module = lower_module(s, [args[n] for n in self._order], name)
        self.loop_ir = str(module)
        ConvertLoopToGpuPass().apply(make_context(), module)
        InsertGpuBarriersPass().apply(make_context(), module)
        self.gpu_ir = str(module)
        ConvertGpuToNvvmPass().apply(make_context(), module)
        self.launches, self._types = _host_program(module, name)
        kernels = [op for op in module.ops if isinstance(op, gpu.ModuleOp)]
        device = ModuleOp([op.clone() for k in kernels for op in device_module(k).body.block.ops])
        self.nvvm_ir = llvm_ir(device, arch)
        self.ptx = emit_ptx(device, arch)
        self.imported_modules = [PtxModule(self.ptx)]
        self._loaded: dict[int, tuple] = {}

    def get_source(self, fmt: str = "ptx") -> str:
        """"ptx" (the default), "ll" (the kernels' LLVM IR for NVPTX), "gpu" (the
        IR after convert-loop-to-gpu) or "loop" (the loop IR)."""
        sources = {"ptx": self.ptx, "cuda": self.ptx, "": self.ptx, "ll": self.nvvm_ir, "gpu": self.gpu_ir,
                   "loop": self.loop_ir}  # fmt: skip
        if fmt not in sources:
            raise ValueError(f"get_source: format {fmt!r} is not one of ptx, ll, gpu, loop")
        return sources[fmt]

    def _kernels(self) -> dict:
        """The driver's function handle of each kernel, loading the PTX once per device."""
        if self.device_id not in self._loaded:
            d = driver()
            info = d.info(self.device_id)
            for launch in self.launches:
                if launch.threads_per_block > info.max_threads_per_block:
                    raise ValueError(
                        f"{self.entry_name}: kernel {launch.kernel} runs {launch.threads_per_block} threads "
                        f"per block; {info.name} allows {info.max_threads_per_block}"
                    )
            module = d.load_ptx(self.ptx)
            functions = {launch.kernel: d.function(module, launch.kernel) for launch in self.launches}
            self._loaded[self.device_id] = (module, functions)
        return self._loaded[self.device_id][1]

    def __call__(self, *arrays) -> None:
        if len(arrays) != len(self._args):
            raise ValueError(f"{self.entry_name} takes {len(self._args)} arrays, got {len(arrays)}")
        d = driver()
        d.device(self.device_id)
        functions = self._kernels()
        on_device, copies = [], []
        for n in self._order:
            array, copied = self._on_device(n, arrays[n])
            on_device.append(array)
            if copied and n in self._outputs:
                copies.append((array, arrays[n]))
        for launch in self.launches:
            params = [c_uint64(on_device[p].pointer) for p in launch.params]
            d.launch(functions[launch.kernel], launch.kernel, launch.grid, launch.block, params)
        d.synchronize()
        for array, host in copies:
            np.copyto(host, array.numpy())

    def _on_device(self, n: int, value) -> tuple[CudaArray, bool]:
        """Argument `n` as a device array, and whether it was copied from the host."""
        global _warned_host_arrays
        memref = self._types[self._order.index(n)]
        shape, dtype = tuple(memref.get_shape()), numpy_dtype(memref.element_type)
        name = self._args[n].name
        if isinstance(value, np.ndarray):
            if not _warned_host_arrays:
                warnings.warn(
                    f"{self.entry_name}: host arrays are copied to the GPU and back at each call; "
                    "pass tc.nd.array(x, device=tc.cuda(0)) to keep them there",
                    stacklevel=3,
                )
                _warned_host_arrays = True
            array, copied = CudaArray.from_numpy(np.ascontiguousarray(value), self.device_id), True
        elif isinstance(value, CudaArray) or hasattr(value, "__cuda_array_interface__"):
            array, copied = as_cuda_array(value, self.device_id), False
        else:
            raise ValueError(
                f"{self.entry_name}: argument {name} must be a device array (tc.nd.array(x, "
                f"device=tc.cuda(0)), a tensor with __cuda_array_interface__) or a numpy array, "
                f"not {type(value).__name__}"
            )
        if array.shape != shape or array.dtype != np.dtype(dtype):
            raise ValueError(
                f"{self.entry_name}: argument {name} must be {np.dtype(dtype)}{list(shape)}, "
                f"got {array.dtype}{list(array.shape)}"
            )
        if array.pointer % ARGUMENT_ALIGNMENT:
            raise ValueError(
                f"{self.entry_name}: argument {name} is at address {array.pointer:#x}, not a multiple of "
                f"{ARGUMENT_ALIGNMENT} bytes, which the kernels' vector loads assume; pass a tensor of its own "
                "(a copy of the view: .clone() or cupy.ascontiguousarray)"
            )
        return array, copied

    def time_evaluator(self, name: str = "", dev=None, number: int = 10, repeat: int = 1, min_repeat_ms: int = 0):
        """TVM's `time_evaluator`: seconds per call, measured with CUDA events."""
        from tilecraft.utils.cuda_driver import Timer

        def evaluate(*arrays):
            self(*arrays)  # warm up (and load the module)
            timer = Timer()
            results = []
            for _ in range(repeat):
                timer.start()
                for _ in range(number):
                    self(*arrays)
                results.append(timer.stop() / 1000 / number)
            return _TimingResult(results)

        return evaluate


@dataclass(frozen=True)
class _TimingResult:
    results: list[float]

    @property
    def mean(self) -> float:
        return sum(self.results) / len(self.results)


def _host_program(module: ModuleOp, name: str) -> tuple[list[Launch], list[MemRefType]]:
    """The launches of host function `name`, which must hold nothing else (what
    runs on the host between kernels is not supported yet)."""
    host = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    args = list(host.body.block.args)
    types = [a.type for a in args]
    for i, t in enumerate(types):
        if not isinstance(t, MemRefType) or any(d < 0 for d in t.get_shape()):
            raise OpError(host, f"{name}: argument #{i + 1} ({t}) is not a memref of static shape")
    constants: dict = {}
    launches = []
    for op in host.body.block.ops:
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            constants[op.result] = op.value.value.data
        elif isinstance(op, gpu.LaunchFuncOp):
            params = []
            for value in op.kernelOperands:
                if value not in args:
                    raise OpError(op, f"{name}: a kernel takes a value other than the function's arguments")
                params.append(args.index(value))
            grid = tuple(constants[v] for v in (op.gridSizeX, op.gridSizeY, op.gridSizeZ))
            block = tuple(constants[v] for v in (op.blockSizeX, op.blockSizeY, op.blockSizeZ))
            launches.append(Launch(op.kernel.nested_references.data[-1].data, grid, block, tuple(params)))  # type: ignore[arg-type]
        elif not isinstance(op, func.ReturnOp):
            raise OpError(
                op,
                f"{name}: '{op.name}' would run on the host between kernels, which target 'cuda' does "
                "not support yet: bind the outermost loops of every stage to blockIdx/threadIdx "
                "(a stage with no bound loop runs on the host)",
            )
    if not launches:
        raise OpError(host, f"{name}: nothing runs on the GPU; bind loops with s[C].bind(axis, te.thread_axis(...))")
    return launches, types  # type: ignore[return-value]


def build_cuda(s: te.Schedule, args: list, name: str, arch: str | None) -> CudaFunction:
    """Compile for target "cuda": for `arch` (e.g. "sm_90"), else the device's if a
    driver and a device are present, else `DEFAULT_ARCH`."""
    from tilecraft.backends.nvptx import DEFAULT_ARCH
    from tilecraft.utils.cuda_driver import device_present

    if arch is None:
        arch = driver().info(0).arch if device_present() is None else DEFAULT_ARCH
    return CudaFunction(s, args, name, arch)
