#!/usr/bin/env bash
# Valgrind stage of scripts/test.sh: memcheck (uninitialised reads, invalid accesses, leaks) on
# a subset of the suite, run from the plain build (BUILD_DIR, default build; set up if missing):
# the API, bad-input, fault-injection, self-check and hostile-input tests, a reduced sweep per
# algorithm (test_sweep --shapes/--dense), the fuzz corpus with its regressions and the int8 csr
# micro-kernel test (its operand fences). Valgrind has no AVX-512 (its CPU model hides it, so AUTO runs the AVX2 and generic
# kernels here). Any error fails the stage. Prints its wall time.
set -eu
cd "$(dirname "$0")/.."
t0=$SECONDS
build=${BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dbuildtype=release
meson compile -C "$build"
export DLCONV_NUM_THREADS=2 OMP_NUM_THREADS=2
logs="$build/valgrind-logs"
rm -rf "$logs"
mkdir -p "$logs"
# vg LOG [VAR=VALUE...] CMD...: memcheck CMD (in that environment), its output in LOG; on
# failure the tail of LOG
vg() {
  local log=$1
  shift
  local envs=()
  while [ $# -gt 0 ] && [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  if ! env "${envs[@]}" valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --show-leak-kinds=definite,indirect --track-origins=no "$@" >"$log" 2>&1; then
    echo "valgrind: FAILED: $* (log $log):" >&2
    tail -n 60 "$log" >&2
    return 1
  fi
}
t="$build/tests"
pids=()
n=0
# as many at once as there are cores: valgrind runs each program on one core
run() {
  n=$((n + 1))
  echo "valgrind: $*"
  vg "$logs/$n.log" "$@" &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$(nproc)" ]; then wait_all; fi
}
fail=0
wait_all() {
  for p in "${pids[@]}"; do wait "$p" || fail=1; done
  pids=()
}
run "$t/test_api"
run "$t/test_invalid"
run "$t/test_faults"
run DLCONV_VERIFY=1 "$t/test_verify_hook"
run "$t/test_hostile"
run "$t/fuzz/fuzz_replay" tests/fuzz/corpus tests/fuzz/regressions
run "$t/test_ukernel_q8_csr"
for algo in auto direct im2col spack gspc csr; do
  run "$t/test_sweep" "$algo" --shapes 60 --dense 15
done
wait_all
if [ "$fail" != 0 ]; then
  echo "valgrind: errors reported above" >&2
  exit 1
fi
echo "== stage valgrind: $((SECONDS - t0)) s"
