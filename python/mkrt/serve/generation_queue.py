"""Generations in the order they came, on a worker thread of its own so that
the event loop is never blocked, while the requests behind them wait their
turn. The model runs one call at a time (libmkrt's rule); where the file
holds batch steps (`mkc compile --batch=B`), that call takes several
waiting requests at once: the first in line and the ones behind it that can
share its launch (answered whole, not streamed; the same sampling settings;
room in every context for the most new tokens any of them asks for), up to
the file's largest batch. A batch costs about one generation's time on the
GPU (each weight is read once a step for all its rows), so requests that
arrive together are answered together; a streamed request runs alone,
token by token. Each job hands its text pieces to the event loop; cancelling
a job (its client went away) skips it when still waiting, or closes its
stream, which stops the kernel after the step in progress (a batch runs to
its end: its other requests still want their answers)."""
import asyncio
import collections
import contextlib
import logging
import threading
import time

from ..errors import UnsupportedError
from ..model import run_together

log = logging.getLogger("mkrt.serve")

PIECE, DONE, ERROR = "piece", "done", "error"


class Job:
    """One generation, and the events it sends to the event loop:
    (PIECE, text)..., then (DONE, None) or (ERROR, exception)."""

    def __init__(self, generation, loop, kind, whole):
        self.generation = generation  # a model._Generation, streaming
        self.kind = kind  # what the log calls it: "completion", "chat"
        self.whole = whole  # answered whole (not streamed): it may share a batch
        self.events = asyncio.Queue()
        self.cancelled = threading.Event()
        self._loop = loop

    def cancel(self):
        self.cancelled.set()

    def post(self, kind, value=None):
        try:
            self._loop.call_soon_threadsafe(self.events.put_nowait, (kind, value))
        except RuntimeError:  # the event loop is closed: the server is stopping
            pass


class GenerationQueue:
    def __init__(self, largest_batch=1):
        self.largest_batch = largest_batch  # the most requests one call takes
        self._jobs = collections.deque()
        self._changed = threading.Condition()
        self._closing = False
        self._running = 0
        self._worker = threading.Thread(target=self._run, name="mkrt-serve-worker", daemon=True)
        self._worker.start()

    def submit(self, generation, kind, whole=False):
        """Queues `generation` (`whole`: its answer is not streamed); its
        job's events come on the running loop."""
        job = Job(generation, asyncio.get_running_loop(), kind, whole)
        with self._changed:
            self._jobs.append(job)
            self._changed.notify()
        return job

    def waiting(self):
        """How many requests wait their turn."""
        with self._changed:
            return len(self._jobs)

    def generating(self):
        """How many generations run (a batch runs several), else 0."""
        return self._running

    def close(self):
        with self._changed:
            self._closing = True
            self._changed.notify()
        self._worker.join()

    def _next(self):
        """The next jobs to run together (None: closing): the first in line
        that is still wanted, and the whole-answer ones behind it that can
        share its batch; the others keep their places."""
        with self._changed:
            while True:
                while not self._jobs and not self._closing:
                    self._changed.wait()
                if self._closing:
                    return None
                job = self._jobs.popleft()
                if job.cancelled.is_set():
                    log.info("%s cancelled while waiting (client gone)", job.kind)
                    continue
                chosen = [job]
                if job.whole:
                    for other in list(self._jobs):
                        if len(chosen) == self.largest_batch:
                            break
                        if (other.whole and not other.cancelled.is_set() and
                                job.generation.batchable_with(
                                    [o.generation for o in chosen[1:] + [other]])):
                            chosen.append(other)
                            self._jobs.remove(other)
                return chosen

    def _run(self):
        while True:
            jobs = self._next()
            if jobs is None:
                return
            self._running = len(jobs)
            try:
                if len(jobs) > 1:
                    outcomes = self._generate_batch(jobs)
                else:
                    outcomes = [self._generate(jobs[0])]
            finally:
                self._running = 0
            # After the generation is over (the kernel has stopped), so that
            # its client's next look at /health finds the model idle.
            for job, (event, value, report) in zip(jobs, outcomes):
                job.post(event, value)
                log.info("%s", report)

    def _generate(self, job):
        """Runs `job` until its generation ends or the job is cancelled,
        posting its pieces; returns its last event and a line for the log."""
        generation = job.generation
        start = time.monotonic()
        cut_short = False
        try:
            with contextlib.closing(generation.result()) as pieces:
                for piece in pieces:
                    if job.cancelled.is_set():
                        cut_short = True
                        break  # closing the stream stops the kernel
                    job.post(PIECE, piece)
        except Exception as error:  # answered to the client
            return ERROR, error, f"{job.kind} failed: {error}"
        seconds = time.monotonic() - start
        produced = len(generation.generated)
        if cut_short:
            outcome = f"cancelled after {produced} of {generation.max_new} tokens (client gone)"
        else:
            outcome = f"{produced} tokens, finish_reason {generation.finish_reason}"
        return DONE, None, (f"{job.kind}: {len(generation.tokens)} prompt tokens, {outcome}, "
                            f"{seconds:.3f} s ({produced / max(seconds, 1e-9):.1f} tokens/s)")

    def _generate_batch(self, jobs):
        """Runs `jobs` in one batch launch, each answer posted whole; where the
        session cannot run them so (UnsupportedError: on a GPU session, a file
        without a batch kernel of that many sequences, say), one after
        another. Their last events and log lines."""
        start = time.monotonic()
        try:
            texts = run_together([job.generation for job in jobs])
        except UnsupportedError as error:
            log.info("a batch of %d runs one request at a time: %s", len(jobs), error)
            return [self._generate(job) for job in jobs]
        except Exception as error:  # answered to every client of the batch
            return [(ERROR, error, f"{job.kind} failed in a batch of {len(jobs)}: {error}")
                    for job in jobs]
        seconds = time.monotonic() - start
        produced = sum(len(job.generation.generated) for job in jobs)
        log.info("batch of %d: %d tokens in %.3f s (%.1f tokens/s)", len(jobs), produced,
                 seconds, produced / max(seconds, 1e-9))
        outcomes = []
        for job, text in zip(jobs, texts):
            if text:
                job.post(PIECE, text)
            generation = job.generation
            outcomes.append((DONE, None, (
                f"{job.kind}: {len(generation.tokens)} prompt tokens, "
                f"{len(generation.generated)} tokens, finish_reason {generation.finish_reason}, "
                f"in a batch of {len(jobs)}")))
        return outcomes
