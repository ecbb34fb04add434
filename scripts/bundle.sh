#!/usr/bin/env bash
# Packs the built tools into a relocatable bundle for another machine (the
# GPU machine has none of the build's Debian libraries): mkc and mkrun link
# MLIR, LLVM and protobuf statically and open NVRTC and libcuda at run time,
# so they need only libc and libstdc++. The bundle also carries libmkrt, its
# C header, the example, the scripts that export, compile and run a model,
# and the decode benchmark (bench/: bench/harness.py finds the tools in bin/).
#   scripts/bundle.sh [OUT.tar.gz]     (default build/mkc-bundle.tar.gz)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:-build/mkc-bundle.tar.gz}"

STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
BUNDLE="$STAGE/mkc"
mkdir -p "$BUNDLE/bin" "$BUNDLE/lib" "$BUNDLE/include" "$BUNDLE/examples" "$BUNDLE/scripts" \
  "$BUNDLE/bench/stream" "$BUNDLE/bench/configs"
cp build/compiler/tools/mkc build/runtime/mkrun/mkrun "$BUNDLE/bin/"
cp build/runtime/mkrt/libmkrt.a "$BUNDLE/lib/"
cp runtime/mkrt/include/mkrt.h "$BUNDLE/include/"
cp examples/generate.c "$BUNDLE/examples/"
cp scripts/export_onnx.py scripts/ort_logits.py scripts/compare_logits.py scripts/run_model.sh \
  scripts/fused_module.py scripts/decoder_dims.py "$BUNDLE/scripts/"
cp bench/*.py "$BUNDLE/bench/"
cp bench/stream/stream_bandwidth.cu bench/stream/Probe.cuh "$BUNDLE/bench/stream/"
cp bench/configs/*.json "$BUNDLE/bench/configs/"

# Refuse to ship a binary that needs a library the other machine may lack.
for binary in "$BUNDLE"/bin/*; do
  extra=$(ldd "$binary" | grep -v -E 'linux-vdso|libc\.so|libm\.so|libstdc\+\+|libgcc_s|ld-linux|libpthread|libdl' || true)
  if [[ -n "$extra" ]]; then
    echo "bundle.sh: $(basename "$binary") needs libraries the bundle does not carry:" >&2
    echo "$extra" >&2
    exit 1
  fi
done

mkdir -p "$(dirname "$OUT")"
tar czf "$OUT" -C "$STAGE" mkc
echo "$OUT: $(du -h "$OUT" | cut -f1) (unpack anywhere; run mkc/scripts/run_model.sh)"
