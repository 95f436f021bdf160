#!/usr/bin/env bash
# Builds libdlconv and runs every test (the README's test command; CI runs exactly this).
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dbuildtype=release
meson compile -C "$build"
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)"
# AArch64: cross-built, single-threaded tests under qemu-user (DLCONV_SKIP_AARCH64=1 skips it).
[ "${DLCONV_SKIP_AARCH64:-0}" = 1 ] || bash scripts/test_aarch64.sh
