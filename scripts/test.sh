#!/usr/bin/env bash
# Builds libdlconv and runs every test (the README's test command; CI runs exactly this).
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dbuildtype=release
meson compile -C "$build"
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)"
