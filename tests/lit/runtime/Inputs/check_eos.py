#!/usr/bin/env python3
"""Checks that generation with an EOS token stopped right after its first
occurrence in the generation without one.

  check_eos.py RUN_WITH_EOS.txt TOKENS_LINE_WITHOUT_EOS
"""
import sys

lines = open(sys.argv[1]).read().splitlines()
first = int(lines[0].split("first generated at index ")[1])
stopped = next(line for line in lines if line.startswith("tokens:")).split()[1:]
full = open(sys.argv[2]).read().split()[1:]
summary = next(line for line in lines if " tokens" in line and " steps in " in line)
if stopped != full[:first + 1] or "(stopped at EOS)" not in summary:
    sys.exit(f"expected {full[:first + 1]} and a stop at EOS, got {stopped}: {summary}")
print(f"stopped at EOS after {len(stopped)} tokens")
