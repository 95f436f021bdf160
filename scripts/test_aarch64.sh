#!/usr/bin/env bash
# AArch64 stage of the test command: cross-compiles libdlconv with Debian's aarch64 gcc and runs
# its single-threaded tests under qemu-user (see below for why only those).
set -eu
cd "$(dirname "$0")/.."
start=$(date +%s)
if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64 >/dev/null 2>&1 ||
   [ ! -e /usr/lib/aarch64-linux-gnu/pkgconfig/cmocka.pc ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq gcc-aarch64-linux-gnu qemu-user libcmocka-dev:arm64 libgomp1:arm64
fi
build=${ARM_BUILD_DIR:-build-aarch64}
# OpenMP off: under qemu-user (Debian's 7.2 in this VM) a second thread never runs, so the
# library is built to run serially here.
[ -f "$build/build.ninja" ] || meson setup "$build" --cross-file scripts/cross/aarch64-linux-gnu.ini \
  -Dbuildtype=release -Dbench=false -Dcuda=disabled -Dopenmp=disabled
meson compile -C "$build"
# Single-threaded tests only: in this VM, qemu-user hangs on any second thread (a bare
# pthread_create + join never returns; libgomp's team likewise), so the sweeps (which run a
# caller thread pool) and the concurrency tests stay native. What runs here covers AArch64
# feature detection, ISA fallback to the generic kernels for every algorithm, validation, and
# the F16/int8 paths (generic kernels on AArch64) against their exact oracle.
list=$(meson test -C "$build" --list 2>/dev/null | sed -n 's/^libdlconv:[a-z]* \/ //p')
light=$(echo "$list" | grep -E '^(api|invalid|lowp|ukernel_q8_gemm|ukernel_f16_gemm|ukernel_lowp_dw|ukernel_lowp_gspc)$' | tr '\n' ' ')
# shellcheck disable=SC2086
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" --timeout-multiplier 4 $light
echo "aarch64 stage: $(( $(date +%s) - start )) s"
