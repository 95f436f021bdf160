#!/usr/bin/env bash
# AArch64 stage of the test command: cross-compiles libdlconv with Debian's aarch64 gcc and runs
# the test suite under qemu-user twice, single-threaded:
#   QEMU_CPU=max          a core with dotprod, FEAT_FP16 and FEAT_FHM: the neon table with its
#                         fast families (the F16 gemm on FMLAL)
#   QEMU_CPU=cortex-a53   armv8.0: the families every AArch64 core runs, and the fallbacks
# Every test but `threads` (concurrent plans on several threads), `env` (child processes whose
# default thread count is the CPUs they may run on: 2 and more threads), `hostile_denormals` (a timing
# test of the hardware: qemu emulates subnormal arithmetic in software, 4-14x slower for every
# ISA, generic included) and `house` (a Python check of the sources, run by the plain stage): in
# this VM qemu-user hangs on any second thread (a bare
# pthread_create + join never returns; libgomp's team likewise), so the library is built without
# OpenMP and DLCONV_NUM_THREADS=1 makes the tests' caller pool run every task on the caller. The
# sweeps run fewer random shapes than natively (emulation is ~50x slower); the micro-kernel tests,
# which cover every tile of the neon table at every edge, run in full.
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
[ -f "$build/build.ninja" ] || meson setup "$build" --cross-file scripts/cross/aarch64-linux-gnu.ini \
  -Dbuildtype=release -Dbench=false -Dcuda=disabled -Dopenmp=disabled
meson compile -C "$build"
echo "aarch64 build: $(( $(date +%s) - start )) s"
export DLCONV_NUM_THREADS=1 OMP_NUM_THREADS=1
list=$(meson test -C "$build" --list 2>/dev/null | sed -n 's/^libdlconv:[a-z]* \/ //p' | grep -v -x -E 'threads|env|hostile_denormals|house')
sweeps=$(echo "$list" | grep '^sweep_' | tr '\n' ' ')
rest=$(echo "$list" | grep -v '^sweep_' | tr '\n' ' ')
for cpu in ${DLCONV_QEMU_CPUS:-max cortex-a53}; do
  t0=$(date +%s)
  echo "== qemu-aarch64 -cpu $cpu, single-threaded"
  # shellcheck disable=SC2086
  QEMU_CPU=$cpu meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" --timeout-multiplier 4 $rest
  # shellcheck disable=SC2086
  QEMU_CPU=$cpu meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" --timeout-multiplier 4 \
    --test-args "--shapes ${DLCONV_QEMU_SHAPES:-150} --dense ${DLCONV_QEMU_DENSE:-25}" $sweeps
  echo "== -cpu $cpu: $(( $(date +%s) - t0 )) s"
done
echo "aarch64 stage: $(( $(date +%s) - start )) s"
