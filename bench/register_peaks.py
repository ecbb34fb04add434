#!/usr/bin/env python3
"""Where the megakernel's registers go: the most registers live at once at
each source line of the device library, from nvdisasm's life ranges, and the
lines that spill or refill.

The kernel runs 512 threads a CTA, so every thread has 128 registers and the
whole kernel (every task kind's code in one function) shares them: the line
with the most live registers is where a change makes ptxas spill, wherever
the spill lands. `mkc compile` prints ptxas's total; this says where.

  mkc compile MODEL --emit=cubin -o kernel.cubin
  python3 bench/register_peaks.py kernel.cubin [--lines 20] [--nvdisasm PATH]

nvdisasm comes with the CUDA toolkit (and in PyPI's nvidia-cuda-nvdisasm);
the kernel must carry line information, which mkc's NVRTC options give it.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

KERNEL = "mk_megakernel"
FILE_LINE = re.compile(r'//## File "([^"]+)", line (\d+)')
ADDRESS = re.compile(r"/\*([0-9a-f]{4,})\*/")
LIVE = re.compile(r"//\s*\|\s*(\d+)\s*\|")


def find_nvdisasm(given):
    if given:
        return given
    found = shutil.which("nvdisasm")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and os.path.exists(os.path.join(home, "bin", "nvdisasm")):
            return os.path.join(home, "bin", "nvdisasm")
    raise SystemExit("register_peaks: no nvdisasm on PATH or in $CUDA_HOME/bin (the CUDA "
                     "toolkit's, or PyPI's nvidia-cuda-nvdisasm); give it with --nvdisasm")


def kernel_lines(text):
    """The lines of the megakernel's own function: from its label to the next
    function (a called one, such as the sampler, has its own registers)."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if f".text.{KERNEL}:" in line]
    if not starts:
        raise SystemExit(f"register_peaks: no {KERNEL} in the disassembly")
    body = []
    for line in lines[starts[0] + 1:]:
        if ".type" in line and "@function" in line:
            break
        body.append(line)
    return body


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cubin")
    ap.add_argument("--lines", type=int, default=20, help="how many source lines to list")
    ap.add_argument("--nvdisasm", help="the nvdisasm to run (default: PATH, then $CUDA_HOME)")
    a = ap.parse_args()
    nvdisasm = find_nvdisasm(a.nvdisasm)

    def disassemble(*options):
        run = subprocess.run([nvdisasm, "-c", *options, a.cubin], capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"register_peaks: {nvdisasm} failed: {run.stderr.strip()}")
        return kernel_lines(run.stdout)

    # nvdisasm prints line information or life ranges, not both: the two
    # listings meet at the instructions' addresses.
    source = {}
    where = None
    spills = collections.Counter()
    for line in disassemble("-g"):
        match = FILE_LINE.search(line)
        if match:
            where = (os.path.basename(match.group(1)), int(match.group(2)))
            continue
        match = ADDRESS.search(line)
        if match:
            source[match.group(1)] = where
            if "STL" in line or "LDL" in line:
                spills[(where, "store" if "STL" in line else "load")] += 1
    if not any(source.values()):
        raise SystemExit("register_peaks: the kernel has no line information")
    peak = collections.defaultdict(int)
    most = 0
    for line in disassemble("-plr", "-lrm", "count"):
        address, live = ADDRESS.search(line), LIVE.search(line)
        if address and live:
            count = int(live.group(1))
            peak[source.get(address.group(1))] = max(peak[source.get(address.group(1))], count)
            most = max(most, count)

    print(f"{KERNEL}: at most {most} registers live at once")
    print(f"\n{'live':>5}  source line")
    for where, count in sorted(peak.items(), key=lambda item: -item[1])[:a.lines]:
        print(f"{count:5d}  {where[0]}:{where[1]}" if where else f"{count:5d}  (no line)")
    if spills:
        print(f"\nlocal-memory stores and loads (spills, refills, local arrays):")
        for (where, kind), count in sorted(spills.items(), key=lambda item: str(item[0])):
            name = f"{where[0]}:{where[1]}" if where else "(no line)"
            print(f"  {count:3d} {kind:5} at {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
