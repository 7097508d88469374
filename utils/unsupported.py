"""What the TVM-spelled API (`import tilecraft as tvm`) raises for TVM names it lacks."""

# Where tilecraft's code runs, for the errors about targets and devices it lacks.
WHERE_TILECRAFT_RUNS = (
    "tilecraft compiles for the host CPU (target 'llvm', device cpu) and for its tensor "
    "accelerator (target 'accel', run on a simulator in host memory: device ext_dev) "
    "and for NVIDIA GPUs through the CUDA driver (target 'cuda', device cuda)"
)


class UnsupportedError(NotImplementedError, AttributeError):
    """A TVM function or attribute that tilecraft does not provide; the message names
    it and says why. It is an AttributeError too, so `hasattr` stays False."""
