"""The accelerator backend: a VTA-compatible hardware spec (`spec`), its binary
instruction encoding (`isa`), accel IR laid out as a program (`program`: micro-op
kernels placed in DRAM, the uop-buffer residency cache, IR <-> instruction lists),
the program verifier the dialect installs (`verify`), the accel-bin file format
(`binary`), the dependence analysis behind insert-dependences (`dependences`) and
the cycle-level simulator (`dram`, `timing`, `machine`, `simulator`)."""
