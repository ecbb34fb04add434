#!/usr/bin/env python3
"""Runs a command, prints its stdout and stderr, and succeeds only if it
exited with the expected code (lit's `not` accepts any failure).

  expect_exit.py CODE -- COMMAND ARGS...
"""
import subprocess
import sys

code = int(sys.argv[1])
assert sys.argv[2] == "--"
result = subprocess.run(sys.argv[3:], capture_output=True, text=True)
sys.stdout.write(result.stdout)
sys.stdout.write(result.stderr)
if result.returncode != code:
    sys.stdout.write(f"expect_exit: exit code {result.returncode}, expected {code}\n")
    sys.exit(1)
