"""tilecraft's dialects: graph (tensor operators), te (tensor expressions), sched
(schedules), loop (loop programs), accel (the accelerator's instructions) and llvmx
(the LLVM instructions xDSL's llvm dialect lacks)."""
