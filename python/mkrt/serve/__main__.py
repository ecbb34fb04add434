"""python -m mkrt.serve MODEL.mk --port N [--host H] [--device D] [--model-name NAME]
                                   [--max-batch B]"""
import argparse
import asyncio
import logging
import os
import signal
import sys

from aiohttp import web

from .. import load
from ..errors import MkrtError
from .app import QUEUE, make_app

log = logging.getLogger("mkrt.serve")


def _arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m mkrt.serve",
                                     description="Serves a .mk file with OpenAI's HTTP API.")
    parser.add_argument("model", help="the .mk file")
    parser.add_argument("--port", type=int, default=8000,
                        help="the TCP port (0: a free one, printed when listening)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "gpu"])
    parser.add_argument("--model-name",
                        help="the model's id in /v1/models and the answers "
                             "(default: the file's name without .mk)")
    parser.add_argument("--max-batch", type=int,
                        help="the most waiting requests answered in one batch launch "
                             "(default: the file's largest batch, `mkc compile --batch=B`; "
                             "1: one request at a time)")
    args = parser.parse_args(argv)
    if args.max_batch is not None and args.max_batch < 1:
        parser.error(f"--max-batch must be at least 1, got {args.max_batch}")
    return args


async def _serve(model, name, host, port, largest_batch):
    # handler_cancellation: a client that disconnects cancels its handler,
    # which cancels its generation (app.py).
    app = make_app(model, name, largest_batch)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound_host, bound_port = runner.addresses[0][:2]
    log.info("serving %s (%s) on http://%s:%d/v1", name, model.device, bound_host, bound_port)
    batch = app[QUEUE].largest_batch
    if batch > 1:
        log.info("up to %d waiting requests answered whole share a batch launch", batch)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    await stopping.wait()
    await runner.cleanup()


def main(argv=None):
    args = _arguments(argv)
    logging.basicConfig(level=logging.INFO, format="mkrt.serve: %(message)s", stream=sys.stderr)
    try:
        model = load(args.model, device=args.device)
    except (MkrtError, FileNotFoundError) as error:
        print(f"mkrt.serve: error: {error}", file=sys.stderr)
        return 2
    name = args.model_name or os.path.basename(args.model).removesuffix(".mk")
    try:
        asyncio.run(_serve(model, name, args.host, args.port, args.max_batch))
    except (MkrtError, OSError) as error:  # no tokenizer, the port taken
        print(f"mkrt.serve: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
