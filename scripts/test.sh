#!/usr/bin/env bash
# Builds libdlconv and runs every test (the README's test command; CI runs exactly this):
#   plain     release build, the whole meson suite
#   aarch64   cross-built, single-threaded tests under qemu-user (scripts/test_aarch64.sh;
#             DLCONV_SKIP_AARCH64=1 skips it)
#   asan      ASan+UBSan build, the whole suite          (scripts/test_sanitizers.sh asan)
#   tsan      ThreadSanitizer build, the threading tests (scripts/test_sanitizers.sh tsan)
#   fuzz      libFuzzer for 60 s, clang                  (scripts/test_fuzz.sh)
#   valgrind  memcheck on a subset of the suite          (scripts/test_valgrind.sh)
# Each stage has its own build directory and prints its wall time. DLCONV_TEST_STAGES picks
# stages (default: all of them, in this order), e.g. DLCONV_TEST_STAGES=plain for a quick run.
set -eu
cd "$(dirname "$0")/.."
stages=${DLCONV_TEST_STAGES:-plain aarch64 asan tsan fuzz valgrind}
has() { case " $stages " in *" $1 "*) return 0 ;; esac; return 1; }
if [ "$stages" = plain ]; then bash scripts/deps.sh; else bash scripts/deps.sh test; fi
t_all=$SECONDS
build=${BUILD_DIR:-build}
if has plain; then
  t0=$SECONDS
  [ -f "$build/build.ninja" ] || meson setup "$build" -Dbuildtype=release
  meson compile -C "$build"
  meson test -C "$build" --print-errorlogs --num-processes "$(nproc)"
  echo "== stage plain: $((SECONDS - t0)) s"
fi
if has aarch64 && [ "${DLCONV_SKIP_AARCH64:-0}" != 1 ]; then bash scripts/test_aarch64.sh; fi
if has asan; then bash scripts/test_sanitizers.sh asan; fi
if has tsan; then bash scripts/test_sanitizers.sh tsan; fi
if has fuzz; then bash scripts/test_fuzz.sh; fi
if has valgrind; then BUILD_DIR=$build bash scripts/test_valgrind.sh; fi
echo "== all stages ($stages): $((SECONDS - t_all)) s"
