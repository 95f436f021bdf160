#!/usr/bin/env bash
# Fuzz stage of scripts/test.sh: builds the libFuzzer target tests/fuzz/fuzz_conv with clang
# (-fsanitize=fuzzer,address,undefined; the library instrumented for coverage) and runs it for
# DLCONV_FUZZ_SECONDS (default 60) from the committed seed corpus and the kept regressions.
# New interesting inputs go to build-fuzz/corpus (not committed). A failing input is saved in
# build-fuzz/artifacts/: fix the library, then keep the input in tests/fuzz/regressions/ (the
# fuzz_replay test of the normal suite runs it in every build from then on).
# Prints its wall time.
set -eu
cd "$(dirname "$0")/.."
t0=$SECONDS
dir=build-fuzz
secs=${DLCONV_FUZZ_SECONDS:-60}
# OpenMP off: one thread, reproducible inputs (the target drives the caller-pool path itself).
# UBSan checks left out as in scripts/test_sanitizers.sh (compile time of the kernels).
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang meson setup "$dir" -Dfuzz=true -Dopenmp=disabled -Dbench=false -Dcuda=disabled -Db_sanitize=address,undefined \
    -Db_lundef=false -Dbuildtype=debugoptimized \
    -Dc_args="-fsanitize=fuzzer-no-link -g1 -fno-sanitize=pointer-overflow,alignment,object-size -fno-sanitize-recover=all"
fi
meson compile -C "$dir" fuzz_conv
mkdir -p "$dir/corpus" "$dir/artifacts"
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
set +e
"$dir/tests/fuzz/fuzz_conv" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -max_len=512 \
  -print_final_stats=1 -artifact_prefix="$dir/artifacts/" "$dir/corpus" tests/fuzz/corpus tests/fuzz/regressions
rc=$?
set -e
if [ "$rc" != 0 ]; then
  echo "fuzz: the target failed (exit $rc); the input is in $dir/artifacts/:" >&2
  ls -l "$dir/artifacts/" >&2
  echo "fuzz: reproduce with $dir/tests/fuzz/fuzz_conv FILE (or DLCONV_FUZZ_VERBOSE=1 build/tests/fuzz/fuzz_replay FILE)," >&2
  echo "fuzz: fix the library, and keep FILE in tests/fuzz/regressions/" >&2
  exit 1
fi
echo "== stage fuzz: $((SECONDS - t0)) s"
