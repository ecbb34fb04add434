"""mkc's side of the decode harness: a shape compiled with random weights,
its GPU logits checked against the CPU executor on the same .mk, and its
step times at a position, all through the command-line tools (`mkc`,
`mkrun`), as a user would run them."""
import csv
import json
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def tools(build):
    """mkc and mkrun of a build tree, or of an unpacked bundle
    (scripts/bundle.sh: bin/mkc, bin/mkrun)."""
    for mkc, mkrun in ((("compiler", "tools", "mkc"), ("runtime", "mkrun", "mkrun")),
                       (("bin", "mkc"), ("bin", "mkrun"))):
        mkc, mkrun = os.path.join(build, *mkc), os.path.join(build, *mkrun)
        if os.access(mkc, os.X_OK) and os.access(mkrun, os.X_OK):
            return mkc, mkrun
    raise FileNotFoundError(f"no mkc and mkrun in '{build}' (a build tree or an unpacked bundle)")


# What `mkc compile` says of the kernel it built: ptxas's account.
KERNEL_ACCOUNT = re.compile(r"(\d+) registers, (\d+) bytes of shared memory \((\d+) dynamic\), "
                            r"(\d+) bytes spilled, (\d+) bytes of stack frame")


def kernel_account(compile_stderr):
    """Registers per thread, shared memory, spills and stack frame from
    mkc compile's account, or None where it built no kernel."""
    found = KERNEL_ACCOUNT.search(compile_stderr)
    if not found:
        return None
    keys = ("registers", "shared_bytes", "dynamic_shared_bytes", "spill_bytes", "stack_frame_bytes")
    return dict(zip(keys, map(int, found.groups())))


def compile_shape(run, mkc, config, context, work, name, reuse=False, kv_cache="bf16", flags=()):
    """The shape's mk IR (scripts/fused_module.py), then a .mk for
    `context` positions with random weights, KV caches of `kv_cache` (f32
    or bf16) and any further `mkc compile` flags. Returns what was built,
    with the kernel's registers and spills (`kernel`) when it was compiled
    now."""
    mlir = os.path.join(work, f"{name}.mlir")
    tag = "".join(c if c.isalnum() else "-" for c in "".join(flags))
    mk = os.path.join(work, f"{name}-c{context}-{kv_cache}{tag}.mk")
    result = {"context": context, "mk": mk, "kv_cache": kv_cache}
    if flags:
        result["flags"] = list(flags)
    if reuse and os.path.exists(mk):
        result.update(reused=True)
    else:
        run([sys.executable, os.path.join(ROOT, "scripts", "fused_module.py"), config, "-o", mlir])
        started = time.time()
        _, said = run([mkc, "compile", mlir, "--emit=mk", "--random-weights",
                       f"--max-context={context}", f"--kv-cache={kv_cache}", *flags, "-o", mk],
                      with_stderr=True)
        result["compile_seconds"] = round(time.time() - started, 1)
        account = kernel_account(said)
        if account:
            result["kernel"] = account
    result["mk_bytes"] = os.path.getsize(mk)
    return result


def inspect(run, mkc, mk, path, rows=1):
    """The graph and schedule of `mk` (`rows` > 1: of its batch of that many)."""
    run([mkc, "inspect", mk, "--format=json", "-o", path,
         *([f"--step=batch:{rows}"] if rows > 1 else [])])
    with open(path) as f:
        return json.load(f)


def check_logits(run, mkrun, mk, tokens, start, tmp, rtol, device="gpu"):
    """Teacher-forced logits of `tokens` from position `start` on `device`
    (the GPU) and on the CPU executor, the same .mk: max |gpu - cpu| /
    max |cpu|."""
    import numpy as np

    listed = ",".join(str(t) for t in tokens)
    arrays, seconds = {}, {}
    for side, engine in (("gpu", device), ("cpu", "cpu")):
        out = os.path.join(tmp, f"check-{side}.npy")
        started = time.time()
        run([mkrun, mk, "--device", engine, "--start-position", start, "--tokens", listed,
             "--logits", out])
        seconds[side] = round(time.time() - started, 1)
        arrays[side] = np.load(out)
    gpu, cpu = arrays["gpu"], arrays["cpu"]
    finite = bool(np.isfinite(gpu).all() and np.isfinite(cpu).all())
    error = float(np.abs(gpu - cpu).max() / max(float(np.abs(cpu).max()), 1e-30)) if finite else float("inf")
    return {"start": start, "tokens": len(tokens), "max_relative_error": error, "rtol": rtol,
            "passed": finite and error <= rtol, "seconds": seconds,
            "argmax_agree": int((gpu.argmax(-1) == cpu.argmax(-1)).sum())}


def time_position(run, mkrun, mk, position, steps, repeats, tmp, device="gpu"):
    """ms/token at `position`: `steps` generation steps at positions
    [position, position + steps), after one prompt step at position - 1
    (--start-position), so that every timed step is a generation step;
    per position the fastest of `repeats` launches, then the median over
    the window."""
    start = max(position - 1, 0)

    def launch(times):
        run([mkrun, mk, "--device", device, "--start-position", start, "--prompt-tokens", "7",
             "-n", steps + (1 if position > 0 else 0), "--step-times", times])

    best, window = fastest_window(launch, position, steps, repeats, tmp, f"steps-{position}")
    return {"ms_per_token": statistics.median(window), "min_ms": min(window), "max_ms": max(window),
            "start_position": start, "repeats": repeats,
            "step_ms": {str(p): round(best[p], 6) for p in sorted(best)}}


def fastest_window(launch, position, steps, repeats, tmp, name):
    """`repeats` launches (launch(path) writes mkrun's --step-times there),
    each position's fastest step, and those of [position, position + steps)."""
    best = {}
    for r in range(repeats):
        times = os.path.join(tmp, f"{name}-{r}.csv")
        launch(times)
        with open(times) as f:
            for row in csv.DictReader(f):
                p, ms = int(row["position"]), float(row["ms"])
                best[p] = min(ms, best.get(p, ms))
    window = [best[p] for p in range(position, position + steps) if p in best]
    if len(window) != steps:
        raise RuntimeError(f"mkrun timed {len(window)} of the {steps} positions from {position} ({name})")
    return best, window


def time_batch(run, mkrun, mk, rows, position, steps, repeats, tmp, device="gpu"):
    """ms a step of a batch of `rows` sequences (a .mk compiled with
    `--batch`) at positions [position, position + steps): every sequence
    fed the same `position` tokens from position 0 in one launch, then
    `steps` + 1 new tokens; per position the fastest of `repeats` launches,
    then the median over the window, as time_position."""
    prompt = ",".join(str(7 + i % 97) for i in range(max(position, 1)))

    def launch(times):
        run([mkrun, mk, "--device", device, *(["--prompt-tokens", prompt] * rows), "-n", steps + 1,
             "--step-times", times])

    _, window = fastest_window(launch, position, steps, repeats, tmp, f"batch-{rows}")
    return {"ms_per_step": statistics.median(window), "min_ms": min(window),
            "max_ms": max(window), "repeats": repeats}


def prompt_tokens(length, vocab):
    """The prompt both mkc and HF are timed on (bench/prefill_bench.py's)."""
    return [(i * 7) % (vocab - 1) + 1 for i in range(1, length + 1)]


def time_prompt(run, mkrun, mk, length, vocab, repeats, tmp, device="gpu", by_step=False):
    """Time to the first token of a prompt of `length` tokens from
    position 0: the sum of mkrun's prompt-phase step times (on the GPU the
    prompt layer by layer, its last token the decode step that yields the
    first new token; `by_step`: one token a decode step), each launch a new
    process; the median of `repeats`."""
    path = os.path.join(tmp, f"prompt-{length}.txt")
    with open(path, "w") as f:  # a file of one line is one prompt, of any length
        f.write(",".join(map(str, prompt_tokens(length, vocab))) + "\n")
    samples = []
    for r in range(repeats):
        times = os.path.join(tmp, f"prompt-{length}-{r}.csv")
        run([mkrun, mk, "--device", device, "--batch-file", path, "-n", 2, "--step-times", times,
             *(["--prompt-by-step"] if by_step else [])])
        with open(times) as f:
            prompt = [float(row["ms"]) for row in csv.DictReader(f) if row["phase"] == "prompt"]
        if len(prompt) != length:
            raise RuntimeError(f"mkrun timed {len(prompt)} prompt positions of {length}")
        samples.append(sum(prompt))
    return {"ms": statistics.median(samples), "min_ms": min(samples), "max_ms": max(samples),
            "repeats": repeats}


def trace(run, mkrun, mk, position, steps, path, device="gpu", rows=1):
    """A Chrome trace of `steps` steps from `position` (mkrun --trace); of a
    batch of `rows` sequences, each from there, where rows > 1."""
    run([mkrun, mk, "--device", device, "--start-position", position,
         *(["--prompt-tokens", "7"] * rows), "-n", steps, "--trace", path])
    return path
