#!/usr/bin/env python3
"""Tokens per second of one greedy generation through the Python package
directly and through `python -m mkrt.serve` (HTTP, JSON, server-sent
events, the tokenizer in the loop both ways), streamed and not: the best
of a few runs each, after a warm-up.

  python3 bench/serve_throughput.py MODEL.mk [--prompt TEXT] [-n N] [--device cpu|gpu|auto]
                                   [--mkrun PATH]

With --mkrun, mkrun's own figure for the same prompt tokens and the same
number of new tokens comes first: the rate without Python, the tokenizer
or HTTP, which the others are measured against.

Pick a prompt whose greedy continuation meets no EOS within N tokens, or
the figures count fewer tokens (they count what was generated).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

PYTHON_PACKAGE = str(Path(__file__).resolve().parents[1] / "python")
sys.path.insert(0, PYTHON_PACKAGE)
import mkrt  # noqa: E402


def best_rate(run, repeats):
    """The best tokens/s of `repeats` calls of run() -> tokens."""
    run()  # warm-up
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        tokens = run()
        rates.append(tokens / (time.perf_counter() - start))
    return max(rates)


def start_server(path, device):
    # The server runs the same checkout's package.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (PYTHON_PACKAGE, os.environ.get("PYTHONPATH")) if p))
    process = subprocess.Popen([sys.executable, "-m", "mkrt.serve", path, "--port", "0",
                                "--device", device], stderr=subprocess.PIPE, text=True, env=env)
    for line in process.stderr:
        found = re.search(r"serving .* on (http://\S+)", line)
        if found:
            return process, found.group(1)
    raise SystemExit(f"the server did not start (exit {process.wait()})")


def mkrun_rate(mkrun, path, device, prompt_tokens, n):
    """mkrun's tokens/s over the generation (its "generation:" line)."""
    result = subprocess.run([mkrun, path, "--device", device, "--prompt-tokens",
                             ",".join(map(str, prompt_tokens)), "-n", str(n)],
                            capture_output=True, text=True, check=True)
    found = re.search(r"^generation: .* ([0-9.]+) tokens/s$", result.stdout, re.M)
    if not found:
        raise SystemExit(f"no generation line in mkrun's output:\n{result.stdout}")
    return float(found.group(1))


def post(url, body):
    request = urllib.request.Request(url + "/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(request)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--prompt", default="hello")
    parser.add_argument("-n", type=int, default=512, help="tokens to generate")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mkrun", help="mkrun, for its own figure on the same tokens")
    args = parser.parse_args()

    model = mkrt.load(args.model, device=args.device)
    tokens = len(model.generate(model.encode(args.prompt), args.n))

    def package_whole():
        model.generate(args.prompt, args.n)
        return tokens  # the same greedy tokens, counted above

    def package_streamed():
        for _ in model.stream(args.prompt, args.n):
            pass
        return tokens

    direct = best_rate(package_whole, args.repeats)
    direct_stream = best_rate(package_streamed, args.repeats)
    device = model.device
    prompt_tokens = model.encode(args.prompt)
    model.close()  # the server opens its own
    alone = (mkrun_rate(args.mkrun, args.model, "cpu" if device.startswith("cpu") else "gpu",
                        prompt_tokens, args.n)
             if args.mkrun else None)

    process, url = start_server(args.model, args.device)
    body = {"prompt": args.prompt, "max_tokens": args.n, "temperature": 0}
    try:
        def whole():
            with post(url, body) as reply:
                return json.load(reply)["usage"]["completion_tokens"]

        def streamed():
            with post(url, dict(body, stream=True, stream_options={"include_usage": True})) \
                    as reply:
                for line in reply:
                    if line.startswith(b"data: {") and b'"usage"' in line:
                        return json.loads(line[6:])["usage"]["completion_tokens"]
            raise SystemExit("no usage in the stream")

        served = best_rate(whole, args.repeats)
        served_stream = best_rate(streamed, args.repeats)
    finally:
        process.terminate()
        process.wait()
    print(f"{args.model} on {device}: {tokens} tokens after {args.prompt!r}, "
          f"best of {args.repeats}")
    if alone is not None:
        print(f"  mkrun (ids only):  {alone:8.1f} tokens/s (its generation steps, no prompt)")
    print(f"  package, whole:    {direct:8.1f} tokens/s")
    print(f"  package, streamed: {direct_stream:8.1f} tokens/s")
    print(f"  server, whole:     {served:8.1f} tokens/s")
    print(f"  server, streamed:  {served_stream:8.1f} tokens/s (server-sent events)")


if __name__ == "__main__":
    main()
