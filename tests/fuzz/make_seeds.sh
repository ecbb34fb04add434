#!/usr/bin/env bash
# Makes the fuzzers' seed corpora from the fixtures, at test time:
#   make_seeds.sh SEEDS PYTHON ROOT MKC GGUF_FIXTURES
# SEEDS/onnx: models whose weights are external data in SEEDS/onnx-data (the
# structure is a few KB, and the external-data entries point at real bytes);
# SEEDS/gguf: the GGUF reader's test files and a small sound one; SEEDS/mk: compiled .mk
# files, one with steps of several rows;
# SEEDS/mk-ir: mk IR text, imported and fused, and the dialect's round trip.
set -euo pipefail
seeds="$1" python="$2" root="$3" mkc="$4" gguf="$5"
rm -rf -- "$seeds"
mkdir -p "$seeds"/{onnx,onnx-data,gguf,mk,mk-ir}
for model in llama3_ts17 qwen3_dynamo23; do
  "$python" "$root/tests/tools/make_variant.py" external-data "$root/tests/fixtures/$model.onnx" \
    "$seeds/onnx-data/$model.onnx"
  cp "$seeds/onnx-data/$model.onnx" "$seeds/onnx/"
done
find "$gguf" -name '*.gguf' -size -256k -exec cp {} "$seeds/gguf/" \;
# A sound file small enough to fuzz (76 KB): the decoder config, the tokens
# and Q4_0 and F16 tensors are reached from it.
"$python" "$root/tests/tools/make_gguf_from_onnx.py" "$root/tests/fixtures/llama3_ts17.onnx" \
  "$seeds/gguf/llama3.q4_0.gguf" --type Q4_0 >/dev/null
"$mkc" compile "$root/tests/fixtures/llama3_ts17.onnx" --no-kernel --no-tokenizer \
  --max-context=16 --num-sms=2 -o "$seeds/mk/llama3.mk" 2>/dev/null
"$mkc" compile "$root/tests/fixtures/llama3_ts17.onnx" --no-kernel --no-tokenizer \
  --max-context=16 --num-sms=2 --prefill-chunk=3 --batch=2 -o "$seeds/mk/llama3-rows.mk" 2>/dev/null
for level in mlir fused; do
  "$mkc" compile "$root/tests/fixtures/llama3_ts17.onnx" --emit=$level -o "$seeds/mk-ir/llama3.$level.mlir"
done
cp "$root/tests/lit/dialect/roundtrip.mlir" "$seeds/mk-ir/"
for kind in onnx gguf mk mk-ir; do
  echo "$kind: $(ls "$seeds/$kind" | wc -l) seeds, $(du -sk "$seeds/$kind" | cut -f1) KiB"
done
