#!/usr/bin/env python3
"""Splits what `mkc inspect MODEL.mk --format=json` prints into its
"artifact" member, summarized on stdout, and the rest, written to GRAPH.json
in the layout mkc prints it (so that it can be diffed against the JSON of the
ONNX model it was compiled from).

  split_artifact_json.py INSPECT.json GRAPH.json
"""
import json
import sys

source, graph_out = sys.argv[1], sys.argv[2]
text = open(source).read()
document = json.loads(text)
artifact = document.pop("artifact", None)
if artifact is None:
    sys.exit("split_artifact_json.py: no \"artifact\" member")
# The member is the first one, printed on the lines before "maxContext".
start = text.index('\n  "maxContext"') + 1
open(graph_out, "w").write("{\n" + text[start:])
if json.loads(open(graph_out).read()) != document:
    sys.exit("split_artifact_json.py: the rest does not parse back to the same document")
weights = artifact["weights"]
if [w["bytes"] for w in weights] != sorted((w["bytes"] for w in weights), reverse=True):
    sys.exit("split_artifact_json.py: the weights are not largest first")
if sum(w["bytes"] for w in weights) != artifact["weightBytes"]:
    sys.exit("split_artifact_json.py: weightBytes is not the weights' sum")
if artifact["hasKernel"] != (artifact["cubinBytes"] + artifact["ptxBytes"] > 0):
    sys.exit("split_artifact_json.py: hasKernel disagrees with the kernel's sizes")
print(f"artifact: hidden {artifact['hidden']}, {artifact['numLayers']} layers, "
      f"vocab {artifact['vocab']}, max context {artifact['maxContext']}, "
      f"{artifact['targetArch']} on {artifact['numSms']} SMs, EOS {artifact['eosTokens']}, "
      f"{len(artifact['sections'])} sections, {len(weights)} weights of "
      f"{artifact['weightBytes']} bytes, largest {weights[0]['name']}")
