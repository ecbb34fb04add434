#!/usr/bin/env bash
# The Python package and the server (the openai client) on the GPU.
set -uo pipefail
mkdir -p /tmp/stash $OUT; cp .xfer/* /tmp/stash/ 2>/dev/null
N=$PWD/.gpu/new; W=/tmp/w
exec > >(tee $OUT/log.txt) 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
ls /tmp/stash
cd python/tests
export MKC=$N/compiler/tools/mkc MKRUN=$N/runtime/mkrun/mkrun MKRT_LIBRARY=$N/runtime/mkrt/libmkrt.so
PYTHONPATH=..:/tmp/site timeout 120 python3 test_gpu.py -v 2>&1 | tail -4
MKRT_TEST_DEVICE=gpu PYTHONPATH=..:/tmp/site timeout 240 python3 test_serve.py -v 2>&1 | tail -25
echo done
