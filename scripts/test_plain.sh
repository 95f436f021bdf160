#!/usr/bin/env bash
# Plain stage of scripts/test.sh: the release build (BUILD_DIR, default build), the whole meson
# suite, then the Python tests and the engine example (scripts/test_python.sh). Also the quick
# check before a commit: DLCONV_TEST_STAGES=plain scripts/test.sh.
set -eu
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dbuildtype=release
meson compile -C "$build"
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)"
bash scripts/test_python.sh
