#!/usr/bin/env bash
# Builds libdlconv and runs every test (the README's test command; CI runs exactly this):
#   plain     release build, the whole meson suite, the Python tests (scripts/test_plain.sh)
#   install   plain's build installed to a staging directory; the installed example built
#             against it with pkg-config and with CMake, and run      (scripts/test_install.sh)
#   aarch64   cross-built, the suite under qemu-user -cpu max and     (scripts/test_aarch64.sh;
#             -cpu cortex-a53, single-threaded;
#             DLCONV_SKIP_AARCH64=1 skips it)
#   asan      ASan+UBSan build, the whole suite                      (scripts/test_sanitizers.sh asan)
#   tsan      ThreadSanitizer build, the threading tests             (scripts/test_sanitizers.sh tsan)
#   fuzz      libFuzzer for 60 s, clang                              (scripts/test_fuzz.sh)
#   valgrind  memcheck on a subset of the suite, on the plain build  (scripts/test_valgrind.sh)
# Each stage has its own build directory (valgrind reuses plain's) and a time budget: it fails
# at once, saying so, when it runs past it, so that a slow stage is named long before CI's
# 90-minute limit. Budgets are for the slowest machine seen (AMD Zen 3, 2 cores); the whole run
# is meant to stay under 45 minutes there. DLCONV_TEST_STAGES picks stages (default: all, in
# this order), e.g. DLCONV_TEST_STAGES=plain for the quick check; DLCONV_STAGE_BUDGET_SCALE
# multiplies every budget (a slower machine, a debug session).
set -eu
cd "$(dirname "$0")/.."
stages=${DLCONV_TEST_STAGES:-plain install aarch64 asan tsan fuzz valgrind}
has() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
if [ "$stages" = plain ]; then bash scripts/deps.sh; else bash scripts/deps.sh test; fi
build=${BUILD_DIR:-build}
export BUILD_DIR=$build
scale=${DLCONV_STAGE_BUDGET_SCALE:-1}
t_all=$SECONDS
summary=""

# stage NAME BUDGET_SECONDS CMD...: runs CMD as one stage, prints its wall time.
stage() {
  local name=$1 budget=$(( $2 * scale )) t0=$SECONDS rc=0
  shift 2
  echo "== stage $name: started (budget $budget s)"
  timeout -k 30 "$budget" "$@" || rc=$?
  local dt=$((SECONDS - t0))
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "== stage $name: FAILED: stopped after $dt s, past its budget of $budget s (scripts/test.sh);" \
      "find what got slower, or raise the budget knowing the whole run must fit CI's 90 minutes" >&2
    exit 1
  elif [ "$rc" != 0 ]; then
    echo "== stage $name: FAILED (exit $rc) after $dt s" >&2
    exit "$rc"
  fi
  echo "== stage $name: $dt s (budget $budget s)"
  summary="$summary $name=${dt}s"
}

if has plain; then stage plain 900 bash scripts/test_plain.sh; fi
if has install; then stage install 300 bash scripts/test_install.sh; fi
if has aarch64 && [ "${DLCONV_SKIP_AARCH64:-0}" != 1 ]; then stage aarch64 900 bash scripts/test_aarch64.sh; fi
if has asan; then stage asan 1200 bash scripts/test_sanitizers.sh asan; fi
if has tsan; then stage tsan 600 bash scripts/test_sanitizers.sh tsan; fi
if has fuzz; then stage fuzz 900 bash scripts/test_fuzz.sh; fi
if has valgrind; then stage valgrind 420 bash scripts/test_valgrind.sh; fi
echo "== all stages:$summary; $((SECONDS - t_all)) s in all"
