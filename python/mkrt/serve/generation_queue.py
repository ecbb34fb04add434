"""Generations one at a time, in the order they came: the model runs one
(libmkrt's rule), on a worker thread of its own so that the event loop is
never blocked, while the requests behind it wait their turn in a FIFO.
Each job hands its text pieces to the event loop as the kernel produces
them; cancelling a job (its client went away) skips it when still waiting,
or closes its stream, which stops the kernel after the step in progress."""
import asyncio
import contextlib
import logging
import queue
import threading
import time

log = logging.getLogger("mkrt.serve")

PIECE, DONE, ERROR = "piece", "done", "error"


class Job:
    """One generation, and the events it sends to the event loop:
    (PIECE, text)..., then (DONE, None) or (ERROR, exception)."""

    def __init__(self, generation, loop, kind):
        self.generation = generation  # a model._Generation, streaming
        self.kind = kind  # what the log calls it: "completion", "chat"
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
    def __init__(self):
        self._jobs = queue.Queue()
        self._running = False
        self._worker = threading.Thread(target=self._run, name="mkrt-serve-worker", daemon=True)
        self._worker.start()

    def submit(self, generation, kind):
        """Queues `generation`; its job's events come on the running loop."""
        job = Job(generation, asyncio.get_running_loop(), kind)
        self._jobs.put(job)
        return job

    def waiting(self):
        """How many requests wait their turn."""
        return self._jobs.qsize()

    def generating(self):
        """1 while a generation runs, else 0."""
        return int(self._running)

    def close(self):
        self._jobs.put(None)
        self._worker.join()

    def _run(self):
        while True:
            job = self._jobs.get()
            if job is None:
                return
            if job.cancelled.is_set():
                log.info("%s cancelled while waiting (client gone)", job.kind)
                continue
            self._running = True
            try:
                event, value, report = self._generate(job)
            finally:
                self._running = False
            # After the generation is over (the kernel has stopped), so that
            # its client's next look at /health finds the model idle.
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
