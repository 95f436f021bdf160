#!/usr/bin/env bash
# The README's main command: builds the library and dlconv-bench (nothing else: no tests) and
# runs the benchmark, which prints one table per suite.
#   scripts/bench.sh                      the ResNet-50 layer suite (bench/layers/resnet50.csv)
#   scripts/bench.sh [options] [suite.csv ...]   other suites; --shape SPEC alone runs that layer
#   scripts/bench.sh --help               dlconv-bench's options, before (and without) any build
# BUILD_DIR picks the build directory (default build, shared with scripts/test.sh).
set -eu
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}

# What the arguments ask for: help, or runs that name their own layers (a suite file, --shape,
# --info). A suite is an argument ending in .csv that is not --csv's file.
help=0 layers=0 after_csv=0
for a in "$@"; do
  if [ "$after_csv" = 1 ]; then after_csv=0; continue; fi
  case $a in
    -h|--help) help=1 ;;
    --shape|--info) layers=1 ;;
    --csv) after_csv=1 ;;
    *.csv) layers=1 ;;
  esac
done

if [ "$help" = 1 ]; then
  cat <<'USAGE'
scripts/bench.sh [dlconv-bench options] [suite.csv ...]: builds libdlconv and dlconv-bench (in
BUILD_DIR, default build) and runs dlconv-bench; without a suite, --shape or --info it runs
bench/layers/resnet50.csv. It sets OMP_PROC_BIND=close OMP_PLACES=cores unless they are set.

USAGE
  if [ -x "$build/bench/dlconv-bench" ]; then exec "$build/bench/dlconv-bench" --help; fi
  # no build yet: the help text needs only bench/options.c and the public header
  command -v cc >/dev/null 2>&1 || bash scripts/deps.sh
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cc -std=c11 -D_GNU_SOURCE -Iinclude -Ibench bench/options.c bench/help_main.c -o "$tmp/help"
  "$tmp/help"
  exit 0
fi

bash scripts/deps.sh
[ -f "$build/build.ninja" ] || meson setup "$build" -Dbuildtype=release
meson compile -C "$build" dlconv-bench
[ "$layers" = 1 ] || set -- "$@" bench/layers/resnet50.csv
export OMP_PROC_BIND=${OMP_PROC_BIND:-close} OMP_PLACES=${OMP_PLACES:-cores}
exec "$build/bench/dlconv-bench" "$@"
