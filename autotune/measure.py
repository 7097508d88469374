"""Measuring candidates in worker processes that a bad candidate cannot take down.

A candidate schedule can crash the process that runs it (a miscompiled kernel
writing out of bounds, a signal), hang, or compute a wrong answer. The tuner
therefore never runs one itself: a `Job` names a function by import path
(`"package.module:function"`) with JSON-like keyword arguments, and a `Worker` — a
separate Python process fed through a socket — calls it and sends back what it returned
(the measured seconds) or the exception's message. The parent waits at most the
job's `timeout`:

- the function raised (e.g. its result differed from the reference): the record's
  error is the message, the worker lives on;
- the worker died (a signal, `os._exit`): the error says how, a new worker starts;
- no answer in time: the worker is killed, the error says "timeout", a new worker
  starts.

Either way the tuner gets a `Result` and goes on. Workers are fresh interpreters
(no state or threads inherited from the tuner), started once and reused between jobs, so a measurement does not pay an interpreter start.
`LocalExecutor(n)` runs jobs on `n` workers in parallel. `DaskExecutor(address)`
sends them to a dask.distributed scheduler instead (a cluster; in tests a
`LocalCluster`): each dask worker runs a job through a `Worker` of its own, so a
candidate that crashes or hangs costs a measuring process, never the dask worker.
"""

from __future__ import annotations

import importlib
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


def _serve_fd(fd: int) -> None:
    from multiprocessing.connection import Connection

    _serve(Connection(fd))


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
    """One measuring process, replaced when a job kills or hangs it.

    A plain child process (`subprocess`, not `multiprocessing`: it must also start
    inside a dask worker, which is a daemon process) running `_serve` on its end of
    a socket pair, with the parent's `sys.path`."""

    def __init__(self):
        self.process = None
        self.conn = None
        self.replaced = 0

    def _start(self) -> None:
        import os
        import socket
        import subprocess
        import sys
        from multiprocessing.connection import Connection

        mine, theirs = socket.socketpair()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        code = f"from tilecraft.autotune.measure import _serve_fd; _serve_fd({theirs.fileno()})"
        self.process = subprocess.Popen([sys.executable, "-c", code], pass_fds=[theirs.fileno()], env=env)
        theirs.close()
        self.conn = Connection(mine.detach())

    def _alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
        if self.conn is not None:
            self.conn.close()
        self.process, self.conn = None, None
        self.replaced += 1

    def run(self, job: Job) -> Result:
        if not self._alive():
            if self.process is not None:
                self._kill()
                self.replaced -= 1  # it died between jobs: that death was reported already
            self._start()
        start = time.perf_counter()
        try:
            self.conn.send((job.function, job.kwargs))
            ready = self.conn.poll(job.timeout)
        except (BrokenPipeError, EOFError, OSError):
            ready = True  # the answer is the worker's death, read below
        if not ready:
            self._kill()
            return Result(error=f"timeout after {job.timeout:g} s", seconds=time.perf_counter() - start)
        try:
            status, payload = self.conn.recv()
        except (EOFError, OSError):
            code = self.process.wait()
            self._kill()
            return Result(error=f"the worker died ({_exit_reason(code)})", seconds=time.perf_counter() - start)
        seconds = time.perf_counter() - start
        if status == "ok":
            return Result(costs=payload, seconds=seconds)
        return Result(error=payload, seconds=seconds)

    def close(self) -> None:
        if self._alive():
            try:
                self.conn.send(None)
                self.process.wait(5)
            except Exception:  # noqa: BLE001 - closing: whatever state it is in, it goes
                self.process.kill()
                self.process.wait()
        if self.conn is not None:
            self.conn.close()
        self.process, self.conn = None, None


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


_DASK_WORKER: Worker | None = None


def _run_on_dask(job: Job) -> Result:
    """A job on a dask worker, isolated in that worker's own measuring process."""
    global _DASK_WORKER
    if _DASK_WORKER is None:
        _DASK_WORKER = Worker()
    return _DASK_WORKER.run(job)


class DaskExecutor:
    """Jobs on a dask.distributed cluster: `DaskExecutor("tcp://host:8786")`, or a
    `distributed.Client` / `LocalCluster` the caller made."""

    def __init__(self, scheduler):
        from distributed import Client

        self.client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
        self._own = not isinstance(scheduler, Client)

    def run(self, jobs: Sequence[Job]) -> list[Result]:
        futures = self.client.map(_run_on_dask, list(jobs), pure=False)
        return self.client.gather(futures)

    def close(self) -> None:
        if self._own:
            self.client.close()

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
