#!/usr/bin/env bash
# Builds libdlconv and runs the benchmark on a layer suite (the README's main command).
# Usage: scripts/bench.sh [dlconv-bench options] [suite.csv ...]   (default: the ResNet-50 suite)
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dbuildtype=release
meson compile -C "$build"
case "$*" in *.csv*) ;; *) set -- "$@" bench/layers/resnet50.csv ;; esac
export OMP_PROC_BIND=${OMP_PROC_BIND:-close} OMP_PLACES=${OMP_PLACES:-cores}
exec "$build/bench/dlconv-bench" "$@"
