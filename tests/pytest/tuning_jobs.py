"""Jobs for test_tuning_measure: candidates that succeed, fail, crash or hang (a
module of its own, so the spawned workers import it by name)."""

from __future__ import annotations

import os
import signal
import time


def ok(n: int = 1):
    return [0.001 * n, 0.002 * n, 0.003 * n]


def wrong_answer():
    raise AssertionError("the candidate's result differs from the reference (max error 3.0)")


def crash(how: str = "exit"):
    if how == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    os._exit(3)


def hang():
    time.sleep(600)
    return [0.0]


def pid():
    return [float(os.getpid())]
