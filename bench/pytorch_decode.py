#!/usr/bin/env python3
"""PyTorch baselines for batch-1 decode: HF transformers in bf16 on the GPU,
random weights of a JSON config (bench/configs/), timed at the same
positions as mkc. At each position P the context up to P is filled by HF
in one batched forward (chunks of --prefill-chunk tokens), never step by
step, then --steps greedy decode steps from P are timed, each token chosen
on the GPU and fed back without a host round trip.

  python3 bench/pytorch_decode.py --config bench/configs/llama-3.2-1b-shaped.json \\
      --positions 1,512,4096,32768 --steps 32 --variants graph [--json OUT.json]

Variants (bench/harness.py runs each in a process of its own, so that one
that breaks the CUDA context cannot take the others with it):
  eager     HF transformers as most people run it: DynamicCache, one Python
            call per step.
  graph     the decoder in plain PyTorch ops over a static KV cache
            (bench/graph_decoder.py), one CUDA graph per step; the attention
            reads the cache up to P + steps.
  compiled  gpt-fast style: the same step with its pieces (norms, the
            projections, rotary, the MLP, lm_head and argmax) through
            torch.compile(mode="max-autotune-no-cudagraphs") with
            torch._inductor.config.coordinate_descent_tuning, then the whole
            step captured as one CUDA graph by hand. The pieces never change
            shape with P, so they compile once; the SDPA over the cache,
            whose length does, is captured as it is.
graph and compiled are checked against HF eager before they are timed: at
every position, one step from the same filled cache, the logits within
--check-rtol of HF's (max |a - b| / max |b|); a variant that fails reports
why instead of a time. The JSON is rewritten after every position, so a
run cut short by a timeout keeps what it measured.
"""
import argparse
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
sys.path.insert(0, HERE)
import export_onnx  # noqa: E402
from graph_decoder import GraphDecoder  # noqa: E402


def random_model(spec, device, seed=0):
    """export_onnx.random_model's weights (N(0, 0.08) matrices, norms near
    1), made on the device in bf16: an 8B model initialized on the CPU in
    f32 takes minutes and 32 GB."""
    import transformers

    torch.manual_seed(seed)
    config = export_onnx.make_config(spec)
    with torch.device(device):
        try:
            model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
        except TypeError:  # transformers 4.x
            model = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
    return export_onnx.widen_random_init(model.to(device=device, dtype=torch.bfloat16).eval())


def prompt_ids(length, vocab, device):
    return ((torch.arange(1, length + 1, device=device) * 7) % (vocab - 1) + 1).unsqueeze(0)


def forward(model, ids, start, cache):
    span = torch.arange(start, start + ids.shape[1], device=ids.device)
    kwargs = dict(input_ids=ids, position_ids=span.unsqueeze(0), cache_position=span,
                  past_key_values=cache, use_cache=True)
    try:
        return model(**kwargs, logits_to_keep=1).logits[0, -1]
    except TypeError:  # older transformers: logits for every position
        return model(**kwargs).logits[0, -1]


def prefill(model, length, chunk, device):
    """A DynamicCache holding positions [0, length), filled by HF in a few
    batched forwards."""
    from transformers import DynamicCache

    cache = DynamicCache()
    ids = prompt_ids(length, model.config.vocab_size, device)
    with torch.no_grad():
        for start in range(0, length, chunk):
            forward(model, ids[:, start:start + chunk], start, cache)
    return cache


class Timer:
    """ms per call of `step`, by CUDA events on the GPU (steady clock
    elsewhere, for trying the script on a CPU)."""

    def __init__(self, device):
        self.cuda = torch.device(device).type == "cuda"

    def __call__(self, step, count):
        if self.cuda:
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(count):
                step()
            stop.record()
            torch.cuda.synchronize()
            return start.elapsed_time(stop) / count
        started = time.perf_counter()
        for _ in range(count):
            step()
        return (time.perf_counter() - started) * 1e3 / count


def eager(model, a, position, timer):
    cache = prefill(model, position, a.prefill_chunk, a.device)
    token = torch.tensor([[7]], device=a.device)
    state = {"token": token, "p": position}

    def step():
        logits = forward(model, state["token"], state["p"], cache)
        state["token"] = logits.argmax(-1).view(1, 1)
        state["p"] += 1

    with torch.no_grad():
        # One untimed pass warms the allocator; the cache is then cut back
        # (a negative crop removes that many positions from the end).
        warm = 2
        for _ in range(warm):
            step()
        cache.crop(-warm)
        if cache.get_seq_length() != position:
            raise RuntimeError(f"the cache holds {cache.get_seq_length()} positions after the "
                               f"warm-up, not {position}")
        state.update(token=token, p=position)
        return {"ms_per_token": timer(step, a.steps)}


def capture(decoder, device):
    """The step as one replayable CUDA graph (on the GPU; the plain call
    elsewhere). Warm-up runs advance the position: the caller rewinds."""
    if torch.device(device).type != "cuda":
        return decoder.step
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            decoder.step()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        decoder.step()
    return graph.replay


class Decoded:
    """graph and compiled: one decoder for every position, its cache as
    large as the largest position + steps."""

    def __init__(self, model, a, compiled):
        self.decoder = GraphDecoder(model, max(a.positions) + a.steps)
        if compiled:
            import torch._inductor.config as inductor

            inductor.coordinate_descent_tuning = True
            for name in ("pre", "post", "head"):
                setattr(self.decoder, name, torch.compile(
                    getattr(self.decoder, name), mode="max-autotune-no-cudagraphs", fullgraph=True))

    def __call__(self, model, a, position, timer):
        decoder = self.decoder
        cache = prefill(model, position, a.prefill_chunk, a.device)
        decoder.fill(cache, position, export_onnx.cache_layer)
        with torch.no_grad():
            # The same step from the same context, by HF and by the decoder
            # (the first call of a compiled decoder compiles it).
            token = 11
            started = time.time()
            reference = forward(model, torch.tensor([[token]], device=a.device), position, cache).float()
            decoder.attend = position + a.steps
            decoder.position.fill_(position)
            decoder.token.fill_(token)
            ours = decoder.step()[0].float()
            error = float((ours - reference).abs().max() / reference.abs().max())
            first_step_s = time.time() - started
            del cache
            if not error <= a.check_rtol:
                raise RuntimeError(f"at position {position} the decoder differs from HF eager by "
                                   f"{error:.2e} (more than {a.check_rtol})")
            print(f"  position {position}: logits vs HF eager, one step: max relative error "
                  f"{error:.1e}", flush=True)
            replay = capture(decoder, a.device)
            decoder.position.fill_(position)
            decoder.token.fill_(7)
            ms = timer(replay, a.steps)
            if int(decoder.position) != position + a.steps:
                raise RuntimeError("the graph did not advance the position once per replay")
            return {"ms_per_token": ms, "check_error": error, "first_step_s": first_step_s}


def environment(device):
    import transformers

    facts = {"torch": torch.__version__, "transformers": transformers.__version__,
             "cuda": torch.version.cuda}
    if torch.device(device).type == "cuda":
        facts["gpu"] = torch.cuda.get_device_name()
    return facts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True)
    ap.add_argument("--positions", default="480",
                    help="comma-separated: the first timed step of each window")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--variants", default="graph,eager", help="comma-separated: eager, graph, compiled")
    ap.add_argument("--prefill-chunk", type=int, default=4096, help="tokens per HF forward filling the context")
    ap.add_argument("--check-rtol", type=float, default=5e-2,
                    help="graph and compiled: the most max|ours - HF| / max|HF| of one step's logits")
    ap.add_argument("--device", default="cuda", help="cuda; cpu only to try the script")
    ap.add_argument("--json", help="write the results here (rewritten after every position)")
    a = ap.parse_args()
    a.positions = [int(p) for p in a.positions.split(",")]
    names = a.variants.split(",")
    unknown = set(names) - {"eager", "graph", "compiled"}
    if unknown:
        ap.error(f"unknown variants {sorted(unknown)}")
    with open(a.config) as f:
        spec = json.load(f)
    started = time.time()
    model = random_model(spec, a.device)
    results = {**environment(a.device), "config": a.config, "steps": a.steps,
               "model_seconds": time.time() - started, "variants": {}}

    def save():
        if a.json:
            with open(a.json + ".tmp", "w") as f:
                json.dump(results, f, indent=1)
            os.replace(a.json + ".tmp", a.json)

    timer = Timer(a.device)
    for name in names:
        result = results["variants"][name] = {"positions": {}}
        started = time.time()
        try:
            run = eager if name == "eager" else Decoded(model, a, compiled=name == "compiled")
            for position in a.positions:
                at = time.time()
                measured = run(model, a, position, timer)
                measured["seconds"] = time.time() - at
                result["positions"][str(position)] = measured
                print(f"{name}: {measured['ms_per_token']:.3f} ms/token at positions {position}-"
                      f"{position + a.steps - 1} ({measured['seconds']:.0f} s)", flush=True)
                save()
        except Exception as error:  # report, and go on with the other variants
            result["error"] = repr(error)[-800:]
            print(f"{name}: failed: {repr(error)[-800:]}", flush=True)
        result["seconds"] = time.time() - started
        save()


if __name__ == "__main__":
    main()
