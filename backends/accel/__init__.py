"""The accelerator backend: a VTA-compatible hardware spec (`spec`) and its binary
instruction encoding (`isa`). The simulator and the accel-bin/accel-asm targets build
on these two modules."""
