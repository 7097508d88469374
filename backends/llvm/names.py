"""Symbols that convert-loop-to-llvm uses and the JIT and the parallel runtime
define or read, in a module of their own: the lowering needs the names without
loading llvmlite."""

RUNTIME_ERROR = "__tilecraft_error"
RUNTIME_ERROR_MESSAGES = "__tilecraft_error_messages"

PARALLEL_LAUNCH = "tilecraft_parallel_launch"
# The cap a launch passes when its loop has none (`tc.max_threads` absent).
NO_THREAD_CAP = (1 << 31) - 1
