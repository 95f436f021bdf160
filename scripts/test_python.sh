#!/usr/bin/env bash
# Python tests (python/tests: the dlconv binding, its struct layouts, dlconv.torch.convert) against
# the plain build's shared library (BUILD_DIR, default build), and a smoke run of the C engine
# example (examples/engine, built here against the build directory). Run by scripts/test_plain.sh.
# Needs a python3 with numpy: on Debian as root it installs python3-numpy when no python3 has
# numpy (DLCONV_PYTHON_DEPS=0 skips that); without one it says so and passes. The torch tests
# run when torch (and torchvision) import, and are skipped with a message when they do not.
set -eu
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
lib=$(pwd)/$build/libdlconv.so
if [ ! -e "$lib" ]; then
  echo "test_python: $lib is missing (build first: scripts/test_plain.sh)" >&2
  exit 1
fi
# the engine example: compiled against this build's header and library, one iteration on 2 threads,
# every execute checked by DLCONV_VERIFY
cc_=${CC:-cc}
if command -v "$cc_" >/dev/null 2>&1; then
  eng=$(pwd)/$build/engine-example
  "$cc_" -O2 -Wall -Wextra -Werror -Iinclude -o "$eng" examples/engine/engine.c -L"$build" -ldlconv -lpthread -lm
  DLCONV_VERIFY=1 LD_LIBRARY_PATH=$(pwd)/$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$eng" --threads 2 --iters 1 --warmup 0 |
    tail -1
fi
find_python() {
  for p in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' >/dev/null 2>&1; then
      echo "$p"
      return 0
    fi
  done
  return 1
}
py=$(find_python || true)
if [ -z "$py" ] && [ "${DLCONV_PYTHON_DEPS:-1}" != 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test_python: installing python3-numpy"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-numpy >/dev/null ||
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-numpy >/dev/null; } || true
  py=$(find_python || true)
fi
if [ -z "$py" ]; then
  echo "test_python: SKIPPED: no python3 with numpy (apt-get install python3-numpy)"
  exit 0
fi
if ! "$py" -c 'import torch' >/dev/null 2>&1; then
  echo "test_python: torch is not installed: the dlconv.torch tests are skipped (apt-get install python3-torch python3-torchvision)"
fi
echo "test_python: $py, $lib"
DLCONV_LIBRARY=$lib PYTHONPATH=$(pwd)/python${PYTHONPATH:+:$PYTHONPATH} OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} \
  "$py" -m unittest discover -s python/tests -t python/tests
