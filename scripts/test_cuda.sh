#!/usr/bin/env bash
# The CUDA backend on a machine with an NVIDIA GPU (sm_80 or newer), in one command:
#   scripts/test_cuda.sh [BUILD_DIR]
# builds the library (release, -Dcuda=enabled) with the CUDA test and dlconv-bench only, runs the
# CUDA tests (tests/test_cuda.c: F32/F16 sweep against the oracle, int8 equal to the CPU, dense,
# stream, bad input), then dlconv-bench --isa cuda --peers cudnn on resnet50 and resnext50_32x4d
# (batch 1 and 32: f32 NCHW, f16 NHWC) and the WideResNet-40-2 G(g) family (batch 1 and 32, f16
# NHWC), and ends with the per-model totals and WRN's G(g)/S ratios next to the MAC ratios.
# Everything goes to BUILD_DIR/test_cuda.log (default build-cuda/). Needs nvcc, meson, ninja and
# cmocka (scripts/deps.sh test installs the last three); cuDNN, where the CUDA toolkit has it, is
# the bench's peer. 2.5 minutes on an H200 (build 37 s on 16 cores).
# Environment: DLCONV_BENCH_MIN_TIME (default 0.05 s per measurement), CUDA_SHAPES (sweep size),
# CUDA_BATCHES (default "32 1"), CUDA_MODELS (default "resnet50 resnext50_32x4d"),
# CUDA_STEP_TIMEOUT=S (each test or bench command stopped after S s), CUDA_OLD=1 (also bench the
# first kernels: DLCONV_CUDA_MMA=1 DLCONV_CUDA_GSPC=1, without
# cuDNN; their totals print as "old"), CUDA_BLOCKS="132 528" (also bench the F16 suites with
# DLCONV_CUDA_MMA2_BLOCKS set to each, the mma2 tile rule's block target; totals as "bN").
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-cuda}
mkdir -p "$build"
log=$build/test_cuda.log
: > "$log"
say() { echo "$*" | tee -a "$log"; }
run() { say "+ $*"; ${CUDA_STEP_TIMEOUT:+timeout "$CUDA_STEP_TIMEOUT"} "$@" 2>&1 | tee -a "$log"; return "${PIPESTATUS[0]}"; }
fail=0
export DLCONV_BENCH_MIN_TIME=${DLCONV_BENCH_MIN_TIME:-0.05}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$log" || true

if [ ! -f "$build/build.ninja" ]; then
  run meson setup "$build" "$root" -Dbuildtype=release -Dcuda=enabled -Dtests=true -Dbench=true || exit 2
fi
t0=$(date +%s)
run ninja -C "$build" tests/test_cuda bench/dlconv-bench || exit 2
say "build: $(( $(date +%s) - t0 )) s"

run "$build/tests/test_cuda" --shapes "${CUDA_SHAPES:-160}"
rc=$?
[ $rc -eq 0 ] || { say "CUDA TESTS: rc=$rc"; fail=1; }
# the kernels off by default: mma2 on every F16 layer (its small tiles, x gathered element by
# element) and the F32 128 x 128 tile with its k table; the first mma.sync kernel with the first
# grouped rules (no gspc2); the WMMA kernels alone
run env DLCONV_CUDA_MMA=3 DLCONV_CUDA_KTAB=1 "$build/tests/test_cuda" --shapes 40
rc=$?
[ $rc -eq 0 ] || { say "CUDA TESTS (DLCONV_CUDA_MMA=3 DLCONV_CUDA_KTAB=1): rc=$rc"; fail=1; }
run env DLCONV_CUDA_MMA=1 DLCONV_CUDA_GSPC=1 "$build/tests/test_cuda" --shapes 40
rc=$?
[ $rc -eq 0 ] || { say "CUDA TESTS (DLCONV_CUDA_MMA=1 DLCONV_CUDA_GSPC=1): rc=$rc"; fail=1; }
run env DLCONV_CUDA_MMA=0 "$build/tests/test_cuda" --shapes 40
rc=$?
[ $rc -eq 0 ] || { say "CUDA TESTS (DLCONV_CUDA_MMA=0): rc=$rc"; fail=1; }

bench=("$build/bench/dlconv-bench" --isa cuda --peers cudnn)
old=(env DLCONV_CUDA_MMA=1 DLCONV_CUDA_GSPC=1 "$build/bench/dlconv-bench" --isa cuda)
L=$root/bench/layers
W=("$L"/wrn40_2_g1.csv "$L"/wrn40_2_g2.csv "$L"/wrn40_2_g4.csv "$L"/wrn40_2_g8.csv "$L"/wrn40_2_g16.csv "$L"/wrn40_2_gN.csv)
for b in ${CUDA_BATCHES:-32 1}; do
  for m in ${CUDA_MODELS:-resnet50 resnext50_32x4d}; do
    algos=auto; [ "$m" = resnext50_32x4d ] && algos=auto,gemm,gspc   # grouped: both algorithms too
    run "${bench[@]}" --batch $b --dtype f16 --layout nhwc --algo $algos "$L/$m.csv" || fail=1
    [ "${CUDA_OLD:-0}" = 1 ] && { run "${old[@]}" --batch $b --dtype f16 --layout nhwc "$L/$m.csv" || fail=1; }
  done
  run "${bench[@]}" --batch $b --dtype f16 --layout nhwc --algo auto,gemm,gspc "${W[@]}" || fail=1
  [ "${CUDA_OLD:-0}" = 1 ] && { run "${old[@]}" --batch $b --dtype f16 --layout nhwc "${W[@]}" || fail=1; }
  for m in ${CUDA_MODELS:-resnet50 resnext50_32x4d}; do
    run "${bench[@]}" --batch $b --dtype f32 --layout nchw "$L/$m.csv" || fail=1
    [ "${CUDA_OLD:-0}" = 1 ] && { run "${old[@]}" --batch $b --dtype f32 --layout nchw "$L/$m.csv" || fail=1; }
  done
  for nb in ${CUDA_BLOCKS:-}; do
    for m in ${CUDA_MODELS:-resnet50 resnext50_32x4d}; do
      run env DLCONV_CUDA_MMA2_BLOCKS=$nb "$build/bench/dlconv-bench" --isa cuda --batch $b --dtype f16 --layout nhwc "$L/$m.csv" || fail=1
    done
    run env DLCONV_CUDA_MMA2_BLOCKS=$nb "$build/bench/dlconv-bench" --isa cuda --batch $b --dtype f16 --layout nhwc "${W[@]}" || fail=1
  done
done

say ""
say "== model totals (ms; dlconv AUTO and cuDNN, from the TOTAL lines) =="
python3 - "$log" <<'PY' | tee -a "$log"
import re, sys
tot = {}
old = None
for line in open(sys.argv[1]):
    if line.startswith("+ "):
        v = re.search(r"DLCONV_CUDA_MMA2_BLOCKS=(\d+)", line)
        old = "old" if "DLCONV_CUDA_MMA=1" in line else "b" + v.group(1) if v else None
    m = re.match(r"TOTAL suite=(\S+) impl=(\S+) batch=(\d+) dtype=(\S+) layout=(\S+) ms=(\S+) complete=(\d)", line)
    if m:
        s, impl, b, dt, lay, ms, ok = m.groups()
        if old:
            if impl != "auto":
                continue
            impl = old
        tot[(s.replace(".csv", ""), impl, int(b), dt, lay)] = (float(ms), ok == "1")
print(f"{'model':18} {'batch':>5} {'dtype':5} {'layout':6} {'dlconv':>9} {'old':>9} {'cudnn':>9} {'us/them':>7}")
for (s, impl, b, dt, lay), (ms, ok) in sorted(tot.items()):
    if impl != "auto":
        continue
    c = tot.get((s, "cudnn", b, dt, lay))
    o = tot.get((s, "old", b, dt, lay))
    r = f"{ms / c[0]:7.2f}" if c and c[0] > 0 else "      -"
    more = " ".join(f"{k[1]}={v[0]:.4f}" for k, v in sorted(tot.items())
                    if k[0] == s and k[2:] == (b, dt, lay) and k[1].startswith("b") and k[1] != "best")
    print(f"{s:18} {b:5} {dt:5} {lay:6} {ms:9.4f}{'' if ok else '*'} {o[0] if o else float('nan'):9.4f} "
          f"{c[0] if c else float('nan'):9.4f} {r} {more}")
ideal = {"g2": 0.603, "g4": 0.360, "g8": 0.238, "g16": 0.177}
for b in (1, 32):
    for impl in ("auto", "best", "old", "cudnn"):
        base = tot.get(("wrn40_2_g1", impl, b, "f16", "nhwc"))
        if not base:
            continue
        row = [f"G({g[1:]})/S {tot[('wrn40_2_' + g, impl, b, 'f16', 'nhwc')][0] / base[0]:.3f} (MACs {v})"
               for g, v in ideal.items() if ("wrn40_2_" + g, impl, b, "f16", "nhwc") in tot]
        print(f"WRN-40-2 batch {b} f16 nhwc {impl}: S {base[0]:.4f} ms; " + ", ".join(row))
PY
say ""
say "test_cuda.sh: $([ $fail -eq 0 ] && echo PASS || echo FAIL) (log: $log)"
exit $fail
