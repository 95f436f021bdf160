#!/usr/bin/env python3
"""Steady-state throughput of the Neon inner loops, on paper: llvm-mca over the loops of the built
objects.

For each kernel function listed below, the script disassembles the AArch64 object that holds it
(the cross build, scripts/test_aarch64.sh), finds its innermost loops (a backward branch and the
instructions from its target to it, with no other loop inside), keeps the one with the most
multiply-accumulates (FMLA, SDOT/UDOT, SMLAL/SADALP, FMLAL), and runs llvm-mca on it for each core.
The limit is the same core's cycles for the loop's multiply-accumulates alone, each on an
accumulator of its own (what its vector pipes can issue, as llvm-mca models them); the table gives
cycles per iteration, that limit, the share of it reached, and the loop's instructions per
multiply-accumulate instruction; then the cycles of the loop's loads and stores alone (the bound
of a streaming loop such as a depthwise row, whose every multiply-accumulate loads and stores its
accumulator) and the share reached of the larger of the two limits.

    scripts/mca_neon.py [build-dir]        (default build-aarch64)

llvm-mca: the newest Debian llvm-mca found (llvm-mca-19 models Neoverse N1's two 128-bit FMLA
pipes; its cortex-a76 model is Cortex-A57's, one 128-bit FMLA per cycle, so the A76 column is
against that model's limit, not the core's).
"""
import glob
import os
import re
import shutil
import subprocess
import sys

# (family, object file stem, function, cores[, mnemonics of the loop wanted[, "block"]]): the loop
# named is the tile the family plans most. "block": the straight-line code between two branches
# with the most of those mnemonics, timed as a loop (a tap column of the depthwise NCHW fast path,
# whose kx loop GCC lays out around its masked twins, so that no innermost loop is the tile's).
KERNELS = [
    ("f32 gemm 12x8", "f32_gemm_neon", "tile_12x2", ["cortex-a76", "neoverse-n1"]),
    ("f32 gemm 12x8 (C^T)", "f32_gemm_neon", "tile_ct_12x2", ["cortex-a76", "neoverse-n1"]),
    ("f32 gemm 12x8, B in place", "f32_gemm_neon", "tile_ldb_12", ["cortex-a76", "neoverse-n1"]),
    ("f32 gemm 12x8, A in place", "f32_gemm_neon", "tile_lda_12x2", ["cortex-a76", "neoverse-n1"]),
    ("f32 direct conv 14x8", "f32_direct_neon", "conv_2v_tile", ["cortex-a76", "neoverse-n1"]),
    ("f32 direct conv 16x4", "f32_direct_neon", "conv_1v_tile", ["cortex-a76", "neoverse-n1"]),
    ("f32 dwconv NHWC 12x8", "f32_direct_neon", "dwc_2v_tile", ["cortex-a76", "neoverse-n1"]),
    ("f32 dwconv NCHW 3x3 s1", "f32_direct_neon", "dwp_k3s1", ["cortex-a76", "neoverse-n1"]),
    ("f32 dwconv NCHW 3x3 s2", "f32_direct_neon", "dwp_k3s2", ["cortex-a76", "neoverse-n1"]),
    ("F16 dwconv NCHW 3x3 s1, a tap column (FCVTL+FMLA)", "f32_direct_neon", "dwp_f16_k3s1", ["cortex-a76", "neoverse-n1", "cortex-a55"], "fmla", "block"),
    ("F16 dwconv NCHW 3x3 s2, a tap column (XTN+FCVTL+FMLA)", "f32_direct_neon", "dwp_f16_k3s2", ["cortex-a76", "neoverse-n1", "cortex-a55"], "fmla", "block"),
    ("F16 dwconv NCHW 5x5 s1, a tap column (FCVTL+FMLA)", "f32_direct_neon", "dwp_f16_k5s1", ["cortex-a76", "neoverse-n1"], "fmla", "block"),
    ("f32 spack 4x7x4", "f32_spack_neon", "spack_4x7x4", ["cortex-a76", "neoverse-n1"]),
    ("f32 spack 2x14x4", "f32_spack_neon", "spack_2x14x4", ["cortex-a76", "neoverse-n1"]),
    ("f32 gspc g1 v4 r1 w6", "f32_gspc_neon", "gspc_g1_v4_r1_w6", ["cortex-a76", "neoverse-n1"]),
    ("f32 gspc g4 v1 r1 w16", "f32_gspc_neon", "gspc_g4_v1_r1_w16", ["cortex-a76", "neoverse-n1"]),
    ("f32 gspc positions 2x40", "f32_gspc_neon", "gspc_pos_o2_v10", ["cortex-a76", "neoverse-n1"]),
    ("f32 gspc diagonal c2 4x3 (groups of 2)", "f32_gspc_neon", "gspc_diag_c2_r4_w3", ["cortex-a76", "neoverse-n1"]),
    ("f32 gspc g2 v1 r1 w16 (groups of 2 in lanes)", "f32_gspc_neon", "gspc_g2_v1_r1_w16", ["cortex-a76", "neoverse-n1"]),
    ("f32 gspc positions 4x24", "f32_gspc_neon", "gspc_pos_o4_v6", ["cortex-a76", "neoverse-n1"]),
    ("f32 csr 3x32", "f32_csr_neon", "csr_spmm", ["cortex-a76", "neoverse-n1"]),
    ("int8 gspc g1 v1 r1 w14 (SMLAL)", "lowp_gspc_neon", "q8_gspc_g1_v1_r1_w14", ["cortex-a76", "neoverse-n1", "cortex-a55"]),
    ("int8 gspc g1 v3 r1 w4 (SMLAL)", "lowp_gspc_neon", "q8_gspc_g1_v3_r1_w4", ["cortex-a76", "neoverse-n1"]),
    ("int8 gspc g4 v1 r2 w7 (SMLAL)", "lowp_gspc_neon", "q8_gspc_g4_v1_r2_w7", ["cortex-a76", "neoverse-n1"]),
    ("f16 gspc g1 v1 r1 w16 (FCVTL+FMLA)", "lowp_gspc_neon", "f16_gspc_g1_v1_r1_w16", ["cortex-a76", "neoverse-n1"]),
    ("f16 gspc g1 v3 r1 w8 (FCVTL+FMLA)", "lowp_gspc_neon", "f16_gspc_g1_v3_r1_w8", ["cortex-a76", "neoverse-n1"]),
    ("int8 csr 3x16c2 (ZIP+SMLAL)", "q8_csr_neon", "q8_csr_spmm_3x16c2__neon", ["cortex-a76", "neoverse-n1", "cortex-a55"]),
    ("int8 gemm 12x8c2 (SMLAL)", "q8_gemm_neon", "tile_12", ["cortex-a76", "neoverse-n1", "cortex-a55"]),
    ("int8 gemm 12x8c4 (SDOT)", "q8_gemm_neondot", "tile_12", ["cortex-a76", "neoverse-n1"], "sdot"),
    ("int8 gemm 12x8c4 in place (SDOT)", "q8_gemm_neondot", "tile_ib_12", ["cortex-a76", "neoverse-n1"], "sdot"),
    ("int8 gemm 12x8c4 fused store (SDOT)", "q8_gemm_neondot", "qtile_1_12", ["cortex-a76", "neoverse-n1"], "sdot"),
    ("int8 gemv 16c4 nb 4 (SDOT)", "q8_gemv_neondot", "gemv_4", ["cortex-a76", "neoverse-n1"], "sdot"),
    ("int8 gemv 16c4 nb 1 (SDOT)", "q8_gemv_neondot", "gemv_1", ["cortex-a76", "neoverse-n1"], "sdot"),
    ("int8 gemm C^T 6x16c4, positions anywhere (SDOT)", "q8_gemm_t_neondot", "ttile_6x4", ["cortex-a76", "neoverse-n1"], "sdot"),
    ("int8 gemm C^T 6x16c4, one run (SDOT)", "q8_gemm_t_neondot", "ttile_c_6x4", ["cortex-a76", "neoverse-n1"], "sdot"),
    ("int8 gemm C^T 6x16c4, two runs of 3 (SDOT)", "q8_gemm_t_neondot", "ttile_s_6_3", ["cortex-a76", "neoverse-n1"], "sdot"),
    ("f16 gemm 12x8 (FCVTL+FMLA)", "f16_gemm_neon", "tile_12", ["cortex-a76", "neoverse-n1", "cortex-a55"]),
    ("f16 gemm 12x8 (FMLAL)", "f16_gemm_neonfhm", "tile_12", ["neoverse-n2"], "fmlal"),
    ("F16 dwconv row, stride 1", "lowp_dw_neon", "f16_row", ["cortex-a76", "neoverse-n1", "cortex-a55"], "fcvtl"),
    ("F16 dwconv row, stride 2", "lowp_dw_neon", "f16_row", ["cortex-a76", "neoverse-n1", "cortex-a55"], "uzp1"),
    ("F16 dwconv NHWC channels", "lowp_dw_neon", "f16_ch", ["cortex-a76", "neoverse-n1", "cortex-a55"]),
    ("int8 dwconv row, stride 1 (u8, USUBL+SMLAL)", "lowp_dw_neon", "q8_row", ["cortex-a76", "neoverse-n1", "cortex-a55"], "usubl"),
    ("int8 dwconv row, stride 1 (s8, SSUBL+SMLAL)", "lowp_dw_neon", "q8_row", ["cortex-a76", "neoverse-n1"], "ssubl"),
    ("int8 dwconv row, stride 2 (u8, UZP1+USUBL+SMLAL)", "lowp_dw_neon", "q8_row", ["cortex-a76", "neoverse-n1", "cortex-a55"], "uzp1|usubl"),
    ("int8 dwconv row, stride 2, 4-lane tail (u8)", "lowp_dw_neon", "q8_row", ["cortex-a76", "neoverse-n1"], "bic"),
    ("int8 dwconv NHWC channels", "lowp_dw_neon", "q8_ch", ["cortex-a76", "neoverse-n1", "cortex-a55"], "mla"),
]

MAC = re.compile(r"^(fmla|mla|fmlal2?|sdot|udot|usdot|smlal2?|umlal2?|sadalp|uadalp|smmla|ummla|usmmla)\b")
BRANCH = re.compile(r"^(b\.\w+|b|cbz|cbnz|tbz|tbnz)\s")
LINE = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
LDST = re.compile(r"^(ld|st)[a-z0-9]*\s")
FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")


def tool(names):
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def functions(obj, objdump):
    """{name: [(addr, text)]} of the object's disassembly."""
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", obj], check=True, capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = FUNC.match(line.strip())
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = LINE.match(line)
        if m and cur is not None:
            text = m.group(2).split("//")[0].strip()
            cur.append((int(m.group(1), 16), text))
    return funcs


def loops(insns):
    """Innermost loops: (start, end) indices of a backward branch's target and the branch."""
    index = {a: i for i, (a, _) in enumerate(insns)}
    found = []
    for i, (_, t) in enumerate(insns):
        if not BRANCH.match(t + " "):
            continue
        m = re.search(r"\b([0-9a-f]+) <", t)
        if not m:
            continue
        tgt = int(m.group(1), 16)
        # a conditional branch: an unconditional one back is a jump to shared code (a function's
        # exit laid out before it), not a loop GCC writes
        if tgt in index and index[tgt] <= i and t.split()[0] != "b":
            found.append((index[tgt], i))
    return [(s, e) for (s, e) in found if not any((s2, e2) != (s, e) and s <= s2 and e2 <= e for (s2, e2) in found)]


def body(insns, s, e):
    """The loop as assembler text: every branch aimed at the loop's label."""
    lines = [".Lloop:"]
    for _, t in insns[s:e + 1]:
        if BRANCH.match(t + " "):
            op = t.split()[0]
            regs = t.split(None, 1)[1].split(",")[:-1] if op in ("cbz", "cbnz", "tbz", "tbnz") else []
            t = op + " " + ", ".join([r.strip() for r in regs] + [".Lloop"])
        lines.append("  " + t)
    return "\n".join(lines) + "\n"


def issue_limit_block(macs):
    """The loop's multiply-accumulates alone, each on its own accumulator (v16-v27 in turn) from
    two fixed sources (v0, v1; v1 stands for a by-element operand, which must lie in v0-v15): what
    the vector pipes can issue, free of the loop's register dependences."""
    out = [".Lloop:"]
    for i, t in enumerate(macs):
        op, args = t.split(None, 1)
        regs = [a.strip() for a in args.split(",")]
        new = []
        for k, r in enumerate(regs):
            m = re.match(r"v(\d+)(\..*)$", r)
            if not m:
                new.append(r)
                continue
            num = 16 + i % 12 if k == 0 else (0 if k == 1 else 1)
            new.append("v%d%s" % (num, m.group(2)))
        out.append("  %s %s" % (op, ", ".join(new)))
    return "\n".join(out) + "\n"


def memory_block(insns, s, e):
    """The loop's loads and stores alone, as written: what its load / store pipes can issue (the
    bound of a streaming loop, a depthwise row whose every multiply-accumulate loads and stores
    its accumulator)."""
    out = [".Lloop:"] + ["  " + t for _, t in insns[s:e + 1] if LDST.match(t + " ")]
    return "\n".join(out) + "\n"


def hot_block(insns, mac):
    """(macs, start, end) of the branch-free run of instructions, ended by a branch, with the most
    instructions matching mac."""
    best, s = None, 0
    for i, (_, t) in enumerate(insns):
        if BRANCH.match(t + " ") or t.startswith("ret"):
            n = sum(1 for _, u in insns[s:i] if mac.match(u))
            if n and (best is None or n > best[0]):
                best = (n, s, i)
            s = i + 1
    return best


def mca(mcabin, cpu, text, iters=200):
    r = subprocess.run([mcabin, "-mtriple=aarch64", "-mcpu=" + cpu, "-mattr=+dotprod,+fp16fml,+fullfp16",
                        "-iterations=%d" % iters], input=text, capture_output=True, text=True)
    m = re.search(r"Total Cycles:\s+(\d+)", r.stdout)
    if not m:
        raise RuntimeError(r.stderr.strip()[:400])
    return int(m.group(1)) / iters


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build-aarch64"
    objdump = tool(["aarch64-linux-gnu-objdump", "llvm-objdump-19", "llvm-objdump"])
    mcabin = tool(["llvm-mca-19", "llvm-mca-18", "llvm-mca-17", "llvm-mca-16", "llvm-mca-15", "llvm-mca"])
    if not objdump or not mcabin:
        sys.exit("needs aarch64-linux-gnu-objdump (binutils-aarch64-linux-gnu) and llvm-mca (llvm)")
    objs = {}
    for o in glob.glob(os.path.join(build, "src", "arch", "*.p", "*.o")):
        objs[os.path.basename(o).split(".c.o")[0]] = o
    print("llvm-mca: %s; objects from %s" % (os.path.basename(mcabin), build))
    print()
    print("| kernel | function | core | MAC instr/iter | cycles/iter | limit | % of limit | instr per MAC instr "
          "| ld/st alone | % of the larger |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cache = {}
    for name, stem, fn, cpus, *want in KERNELS:
        mac = re.compile("^(" + want[0] + r")\b") if want else MAC
        obj = next((p for k, p in objs.items() if k.endswith(stem)), None)
        if obj is None:
            print("| %s | %s | - | object %s not built | | | | |" % (name, fn, stem))
            continue
        if obj not in cache:
            cache[obj] = functions(obj, objdump)
        insns = cache[obj].get(fn)
        if not insns:
            print("| %s | %s | - | not found | | | | |" % (name, fn))
            continue
        best = hot_block(insns, mac) if len(want) > 1 and want[1] == "block" else None
        for s, e in ([] if best else loops(insns)):
            n = sum(1 for _, t in insns[s:e + 1] if mac.match(t))
            # the most multiply-accumulates; of loops with as many, the shortest (a tile's fast path,
            # not its masked twin)
            if n and (best is None or n > best[0] or (n == best[0] and e - s < best[2] - best[1])):
                best = (n, s, e)
        if best is None:
            print("| %s | %s | - | no loop with multiply-accumulates | | | | |" % (name, fn))
            continue
        n, s, e = best
        n = sum(1 for _, t in insns[s:e + 1] if MAC.match(t))
        text = body(insns, s, e)
        macs = [t for _, t in insns[s:e + 1] if MAC.match(t)]
        # a loop with fewer multiply-accumulates than the 12 accumulators of the limit's block
        # (the depthwise rows: 1 or 2) would time their latency chain, not the issue rate: its
        # block repeats them rep times, and the cycles count 1 / rep
        rep = -(-12 // len(macs))
        for cpu in cpus:
            cyc = mca(mcabin, cpu, text)
            lim = mca(mcabin, cpu, issue_limit_block(macs * rep)) / rep
            mem = mca(mcabin, cpu, memory_block(insns, s, e))
            print("| %s | %s | %s | %d | %.2f | %.2f | %.0f%% | %.2f | %.2f | %.0f%% |" %
                  (name, fn, cpu, n, cyc, lim, 100.0 * lim / cyc, (e - s + 1) / n, mem, 100.0 * max(lim, mem) / cyc))


if __name__ == "__main__":
    main()
