#!/usr/bin/env python3
"""Runs a command, prints its stdout and stderr, and succeeds only if it
exited with the expected code (lit's `not` accepts any failure).

  expect_exit.py CODE [--timeout SECONDS] [--max-memory MIB] -- COMMAND ARGS...

--timeout fails a command that hangs (a FIFO opened for reading blocks
forever) instead of hanging the test; --max-memory caps its address space,
so that a command allocating what its input merely declares fails here
rather than on a machine with less memory than this one.
"""
import os
import resource
import subprocess
import sys

code = int(sys.argv[1])
args = sys.argv[2:]
timeout, max_memory = None, None
while args and args[0] != "--":
    if args[0] == "--timeout":
        timeout = float(args[1])
    elif args[0] == "--max-memory":
        max_memory = int(args[1]) << 20
    else:
        sys.exit(f"expect_exit: unknown option {args[0]}")
    args = args[2:]
assert args and args[0] == "--", "expect_exit.py CODE [options] -- COMMAND ..."


# Under AddressSanitizer (MKC_SANITIZED, set by lit.cfg.py) the address space
# cannot be capped, ASan's shadow alone being terabytes of it: its allocator
# refuses, as an out-of-memory, any one allocation past the cap instead.
sanitized = os.environ.get("MKC_SANITIZED") == "1"
env = dict(os.environ)
if sanitized and max_memory is not None:
    env["ASAN_OPTIONS"] = ":".join(filter(None, [
        env.get("ASAN_OPTIONS", ""), f"max_allocation_size_mb={max_memory >> 20}",
        "allocator_may_return_null=1"]))


def limit_memory():
    if max_memory is not None and not sanitized:
        resource.setrlimit(resource.RLIMIT_AS, (max_memory, max_memory))


try:
    result = subprocess.run(args[1:], capture_output=True, text=True, timeout=timeout,
                            preexec_fn=limit_memory, env=env)
except subprocess.TimeoutExpired:
    sys.stdout.write(f"expect_exit: still running after {timeout} s, expected exit code {code}\n")
    sys.exit(1)
sys.stdout.write(result.stdout)
sys.stdout.write(result.stderr)
if result.returncode != code:
    sys.stdout.write(f"expect_exit: exit code {result.returncode}, expected {code}\n")
    sys.exit(1)
