"""Measuring candidates in worker processes that a bad candidate cannot take down.

A candidate schedule can crash the process that runs it (a miscompiled kernel
writing out of bounds, a signal), hang, or compute a wrong answer. The tuner
therefore never runs one itself: a `Job` names a function by import path
(`"package.module:function"`) with JSON-like keyword arguments, and a `Worker` — a
separate process fed through a pipe — calls it and sends back what it returned
(the measured seconds) or the exception's message. The parent waits at most the
job's `timeout`:

- the function raised (e.g. its result differed from the reference): the record's
  error is the message, the worker lives on;
- the worker died (a signal, `os._exit`): the error says how, a new worker starts;
- no answer in time: the worker is killed, the error says "timeout", a new worker
  starts.

Either way the tuner gets a `Result` and goes on. Workers start with the "spawn"
method (a fresh interpreter: no state or threads inherited from the tuner), once,
and are reused between jobs, so a measurement does not pay an interpreter start.
`LocalExecutor(n)` runs jobs on `n` workers in parallel; the dask executor (for a
cluster) gives the same interface.
"""

from __future__ import annotations

import importlib
import multiprocessing
import threading
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Job:
    function: str  # "package.module:function", importable in a fresh interpreter
    kwargs: dict = field(default_factory=dict)
    timeout: float = 60.0


@dataclass(frozen=True)
class Result:
    costs: tuple[float, ...] = ()
    error: str | None = None
    seconds: float = 0.0  # wall time of the job, start to answer (or kill)


def _resolve(path: str):
    module, _, name = path.partition(":")
    if not module or not name:
        raise ValueError(f"a job names its function as 'package.module:function', not {path!r}")
    return getattr(importlib.import_module(module), name)


def _serve(conn) -> None:
    """The worker's loop: a job in, ("ok", costs) or ("error", message) out."""
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        path, kwargs = message
        try:
            costs = _resolve(path)(**kwargs)
            conn.send(("ok", tuple(float(c) for c in costs)))
        except Exception as e:  # noqa: BLE001 - a candidate's failure is data for the tuner
            last = traceback.extract_tb(e.__traceback__)[-1:] if e.__traceback__ else []
            where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
            conn.send(("error", f"{type(e).__name__}: {e}{where}"))


class Worker:
    """One measuring process, replaced when a job kills or hangs it."""

    _context = multiprocessing.get_context("spawn")

    def __init__(self):
        self.process = None
        self.conn = None
        self.replaced = 0

    def _start(self) -> None:
        parent, child = self._context.Pipe()
        self.process = self._context.Process(target=_serve, args=(child,), daemon=True)
        self.process.start()
        child.close()
        self.conn = parent

    def _kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
        self.process, self.conn = None, None
        self.replaced += 1

    def run(self, job: Job) -> Result:
        if self.process is None or not self.process.is_alive():
            self._start()
        start = time.perf_counter()
        try:
            self.conn.send((job.function, job.kwargs))
            ready = self.conn.poll(job.timeout)
        except (BrokenPipeError, EOFError, OSError):
            ready = False
        if not ready:
            alive = self.process.is_alive()
            code = self.process.exitcode
            self._kill()
            seconds = time.perf_counter() - start
            if alive:
                return Result(error=f"timeout after {job.timeout:g} s", seconds=seconds)
            return Result(error=f"the worker died ({_exit_reason(code)})", seconds=seconds)
        try:
            status, payload = self.conn.recv()
        except EOFError:
            self.process.join(1)
            code = self.process.exitcode
            self._kill()
            return Result(error=f"the worker died ({_exit_reason(code)})", seconds=time.perf_counter() - start)
        seconds = time.perf_counter() - start
        if status == "ok":
            return Result(costs=payload, seconds=seconds)
        return Result(error=payload, seconds=seconds)

    def close(self) -> None:
        if self.process is not None and self.process.is_alive():
            try:
                self.conn.send(None)
            except (BrokenPipeError, OSError):
                pass
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()
        self.process = None


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        import signal

        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


class LocalExecutor:
    """`n` workers on this machine; `run(jobs)` gives their results in order."""

    def __init__(self, workers: int = 1):
        if workers < 1:
            raise ValueError("an executor needs at least one worker")
        self.workers = [Worker() for _ in range(workers)]
        self._free: list[Worker] = list(self.workers)
        self._lock = threading.Condition()

    def _take(self) -> Worker:
        with self._lock:
            while not self._free:
                self._lock.wait()
            return self._free.pop()

    def _give(self, worker: Worker) -> None:
        with self._lock:
            self._free.append(worker)
            self._lock.notify()

    def _one(self, job: Job) -> Result:
        worker = self._take()
        try:
            return worker.run(job)
        finally:
            self._give(worker)

    def run(self, jobs: Sequence[Job]) -> list[Result]:
        with ThreadPoolExecutor(max_workers=len(self.workers)) as pool:
            return list(pool.map(self._one, jobs))

    @property
    def replaced(self) -> int:
        return sum(w.replaced for w in self.workers)

    def close(self) -> None:
        for w in self.workers:
            w.close()

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
