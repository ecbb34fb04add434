#!/usr/bin/env bash
# Sets up mkc on a Debian 12 machine, as root: Debian's packages (LLVM/MLIR 15,
# ONNX, protobuf, GoogleTest), the project's Python venv (.venv) and the build
# (build/). Every step is skipped or incremental when already done, so the
# demo and test scripts call it first on every run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

step() { printf '\n==> %s\n' "$*"; }

APT_PACKAGES=(
  cmake ninja-build g++
  llvm-15-dev libmlir-15-dev mlir-15-tools llvm-15-tools
  libonnx-dev libprotobuf-dev protobuf-compiler libgtest-dev
  zlib1g-dev libtinfo-dev libzstd-dev
  python3-venv
  # The sanitized build and the fuzz targets (scripts/test.sh, build-asan/):
  # clang with its sanitizer and libFuzzer runtimes.
  clang libclang-rt-14-dev
)
VENV="$ROOT/.venv"
PYTHON="$VENV/bin/python"
REQUIREMENTS="$ROOT/scripts/requirements.txt"
# A copy of the requirements the venv was made from: a change reinstalls.
VENV_STAMP="$VENV/mkc-requirements.txt"

step "[1/4] Debian packages"
missing=()
for package in "${APT_PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
if ((${#missing[@]} == 0)); then
  echo "all ${#APT_PACKAGES[@]} packages are installed"
else
  if ((EUID != 0)); then
    echo "setup.sh: missing packages (${missing[*]}); run as root to install them" >&2
    exit 1
  fi
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y "${APT_PACKAGES[@]}"
fi

step "[2/4] Python venv ($VENV)"
if [[ -x "$PYTHON" ]] && cmp -s "$REQUIREMENTS" "$VENV_STAMP" &&
   "$PYTHON" -c "import numpy, onnx, onnxruntime, lit, tokenizers, jinja2, aiohttp, openai" 2>/dev/null &&
   [[ -x "$VENV/bin/lit" ]]; then
  echo "up to date ($("$PYTHON" --version))"
else
  # --clear remakes a venv whose interpreter has gone (a moved checkout, a
  # removed Python); a working one is only topped up.
  if ! "$PYTHON" -c "" 2>/dev/null; then
    python3 -m venv --clear "$VENV"
  fi
  "$PYTHON" -m pip install --disable-pip-version-check -r "$REQUIREMENTS"
  cp "$REQUIREMENTS" "$VENV_STAMP"
fi

# The Python package, editable: it runs from python/ and finds the build
# tree's libmkrt.so (python/README.md). Reinstalled when the venv's copy is
# another checkout's. setuptools and wheel come from the venv: nothing fetched.
if "$PYTHON" -c "import mkrt, sys; sys.exit(mkrt.__file__ != sys.argv[1])" \
     "$ROOT/python/mkrt/__init__.py" 2>/dev/null; then
  echo "mkrt (python/) is installed"
else
  "$PYTHON" -m pip install --disable-pip-version-check --no-build-isolation --no-deps \
    -e "$ROOT/python"
fi

# cudnn_frontend's headers, for the prompts' attention by cuDNN
# (runtime/gpu/CudnnAttention.h): only the headers of its wheel, unpacked
# under the venv (the wheel's Python module and its dependencies are not
# needed). cuDNN itself is the GPU machine's, opened at run time.
CUDNN_FRONTEND_VERSION=1.32.0
CUDNN_FRONTEND="$VENV/cudnn-frontend"
if [[ "$(cat "$CUDNN_FRONTEND/version" 2>/dev/null)" == "$CUDNN_FRONTEND_VERSION" ]]; then
  echo "cudnn_frontend $CUDNN_FRONTEND_VERSION headers are unpacked"
else
  rm -rf -- "$CUDNN_FRONTEND" "$VENV/wheels"
  "$PYTHON" -m pip download --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$VENV/wheels" "nvidia-cudnn-frontend==$CUDNN_FRONTEND_VERSION"
  "$PYTHON" - "$VENV/wheels" "$CUDNN_FRONTEND" <<'UNPACK'
import pathlib, sys, zipfile
wheels, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
(wheel,) = wheels.glob("nvidia_cudnn_frontend-*.whl")
with zipfile.ZipFile(wheel) as archive:
    for name in archive.namelist():
        if name.startswith("include/") and not name.endswith("/"):
            archive.extract(name, target)
UNPACK
  echo "$CUDNN_FRONTEND_VERSION" > "$CUDNN_FRONTEND/version"
  rm -rf -- "$VENV/wheels"
fi

step "[3/4] Configure (build/)"
# build/ made from another checkout (a clone in another folder) is refused by
# CMake, and its objects would be stale: start it afresh.
if [[ -f build/CMakeCache.txt ]] &&
   ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$ROOT" build/CMakeCache.txt; then
  echo "build/ was configured for another source folder; removing it"
  rm -rf -- "$ROOT/build"
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PYTHON" \
  -DMKC_CUDNN_FRONTEND_INCLUDE_DIR="$CUDNN_FRONTEND/include"

step "[4/4] Build"
ninja -C build

step "Set up: tools in build/compiler/tools, Python in .venv"
