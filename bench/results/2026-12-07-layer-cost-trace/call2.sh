#!/usr/bin/env bash
# NOT YET RUN (written after the session's device time was spent): where a
# layer of Qwen3-0.6B and of Qwen2.5-1.5B goes. On the H200 (../2026-12-07-
# h200-harness) Qwen3-0.6B built for 544 takes 0.755 ms at 512: past
# lm_head's 311 MB, ~24.5 us a layer for 30.5 MB (6.9 us at the streaming
# rate), against ~15 us a layer on SmolLM2 for 9 MB; neither shape has a
# trace since 2026-12-04. call1.sh for these two shapes (builds for 544,
# bf16 caches, four steps from 480, layer 14), everything packed into
# $OUT/traced.tar.xz (call 1 lost the tiny layers' summaries to the limit on
# files a call brings back). Carry .gpu/ab5.tar.xz
# (`scripts/pack_builds.sh .gpu/ab5.tar.xz new=` on the commit to trace).
SHAPES=qwen3-0.6b-shaped:q:14,qwen2.5-1.5b-shaped:w:14 PACK=1 \
  exec bash "$(dirname "$0")/call1.sh"
