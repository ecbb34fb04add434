"""python -m mkrt.serve MODEL.mk --port N [--host H] [--device D] [--model-name NAME]"""
import argparse
import asyncio
import logging
import os
import signal
import sys

from aiohttp import web

from .. import load
from ..errors import MkrtError
from .app import make_app

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
    return parser.parse_args(argv)


async def _serve(model, name, host, port):
    # handler_cancellation: a client that disconnects cancels its handler,
    # which cancels its generation (app.py).
    runner = web.AppRunner(make_app(model, name), handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound_host, bound_port = runner.addresses[0][:2]
    log.info("serving %s (%s) on http://%s:%d/v1", name, model.device, bound_host, bound_port)
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
        asyncio.run(_serve(model, name, args.host, args.port))
    except (MkrtError, OSError) as error:  # no tokenizer, the port taken
        print(f"mkrt.serve: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
