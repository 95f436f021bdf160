#!/usr/bin/env bash
# Sanitizer stages of scripts/test.sh, each in its own build directory:
#   scripts/test_sanitizers.sh asan   ASan + UBSan (gcc), the whole meson suite; LeakSanitizer
#                                     checks every test process for leaks at exit (the fault
#                                     injection test relies on it)
#   scripts/test_sanitizers.sh tsan   ThreadSanitizer (gcc), the multi-threaded tests
# Prints its wall time. The first error of any sanitizer fails the stage.
set -eu
cd "$(dirname "$0")/.."
what=${1:?usage: scripts/test_sanitizers.sh asan|tsan}
t0=$SECONDS
jobs=$(nproc)

# Two UBSan sub-checks left out, for build time only: gcc's pointer-overflow and object-size
# instrumentation of the unrolled intrinsic micro-kernels is what makes them compile 5-10x
# slower (f32_direct_avx512.c: 30 s plain; 350 s with -fsanitize=undefined; 165 s with ASan and
# UBSan minus these two at -g1). ASan covers what they would find in memory accesses
# (out-of-bounds, wild pointers). -g1: line tables are all the stack traces need, and full debug
# info of those files costs another third.
san_cflags="-g1 -fno-sanitize=pointer-overflow,object-size"

case "$what" in
  asan)
    dir=build-asan
    # CUDA is left to the plain stage (it needs a GPU to run, and nvcc's time is better spent once)
    [ -f "$dir/build.ninja" ] || meson setup "$dir" -Db_sanitize=address,undefined -Db_lundef=false \
      -Dbuildtype=debugoptimized -Dcuda=disabled -Dc_args="$san_cflags"
    meson compile -C "$dir"
    # allocator_may_return_null: tests ask for absurd workspaces on purpose and expect
    # OUT_OF_MEMORY, not an ASan abort
    export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:abort_on_error=1:print_summary=1
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    # the timing test measures the sanitizer, not the library
    meson test -C "$dir" --print-errorlogs --num-processes "$jobs" --timeout-multiplier 4 --no-suite timing
    ;;
  tsan)
    dir=build-tsan
    # OpenMP is off here: libgomp is not built with TSan, so its barriers are invisible to it and
    # every parallel region reports false races. Without OpenMP the library runs tasks serially
    # or on the caller's pool (dlconv_options.parallel_for), and that path, plus plans shared by
    # many threads, thread-local errors and the wisdom lock, is what this stage checks.
    [ -f "$dir/build.ninja" ] || meson setup "$dir" -Db_sanitize=thread -Db_lundef=false -Dopenmp=disabled \
      -Dbuildtype=debugoptimized -Dbench=false -Dcuda=disabled -Dc_args=-g1
    meson compile -C "$dir"
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
    # every test that starts threads: concurrency (8 threads on one plan, caller pools, plans made
    # concurrently), and the sweeps, whose caller-pool cases run tasks on 2 pool threads (fewer
    # shapes: TSan is 5-15x slower)
    meson test -C "$dir" --print-errorlogs --num-processes "$jobs" --timeout-multiplier 4 threads
    meson test -C "$dir" --print-errorlogs --num-processes "$jobs" --timeout-multiplier 4 \
      --test-args "--shapes 300 --dense 40" sweep_auto sweep_direct sweep_im2col sweep_spack sweep_gspc sweep_csr
    ;;
  *) echo "usage: scripts/test_sanitizers.sh asan|tsan" >&2; exit 2 ;;
esac
echo "== stage $what: $((SECONDS - t0)) s"
