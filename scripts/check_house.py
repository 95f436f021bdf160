#!/usr/bin/env python3
"""The floors of the house (docs/architecture.md, "Floors"), checked on the include graph of src/.

Each floor includes only floors below it:
  src/core/, src/quant/   services and arithmetic: nothing above them (ground floor, with
                          src/ukernel/); no include cycle among core's files
  src/ukernel/            micro-kernel interfaces: only ukernel/ and quant/
  src/arch/               kernels and their configs: never a driver or the top floor
  drivers                 src/direct, gemm_im2col, spatial_pack, gspc, sparse_csr: never src/arch/
                          (kernels come through the plan's table) nor the top floor
  src/api/                the top floor: anything
Prints each violation and exits 1 if there is any."""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
SRC = os.path.normpath(SRC)
DRIVERS = {"direct", "gemm_im2col", "spatial_pack", "gspc", "sparse_csr"}
ALLOWED = {
    "core": {"core", "quant"},
    "quant": {"quant", "core"},
    "ukernel": {"ukernel", "quant"},
    "arch": {"arch", "ukernel", "quant", "core"},
    "api": None,  # the top floor
}
for d in DRIVERS:
    ALLOWED[d] = {"core", "quant", "ukernel"} | DRIVERS


def floor(path):
    return os.path.relpath(path, SRC).split(os.sep)[0]


def includes(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m:
                yield m.group(1)


def main():
    bad = []
    graph = {}
    for dirpath, _, names in os.walk(SRC):
        for name in names:
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, name)
            here = floor(path)
            allowed = ALLOWED.get(here)
            for inc in includes(path):
                target = os.path.normpath(os.path.join(dirpath, inc))
                if not target.startswith(SRC + os.sep):
                    continue  # the public header, system headers
                graph.setdefault(path, []).append(target)
                there = floor(target)
                if allowed is not None and there not in allowed:
                    bad.append(f"{os.path.relpath(path, SRC)}: includes {os.path.relpath(target, SRC)} "
                               f"({here}/ may not include {there}/)")
    # no cycle among core's files
    core = {p for p in graph if floor(p) == "core"}
    state = {}

    def visit(p, stack):
        state[p] = 1
        for q in graph.get(p, []):
            if q not in core:
                continue
            if state.get(q) == 1:
                bad.append("include cycle in core: " + " -> ".join(os.path.relpath(s, SRC) for s in stack + [q]))
            elif q not in state:
                visit(q, stack + [q])
        state[p] = 2

    for p in sorted(core):
        if p not in state:
            visit(p, [p])
    for b in bad:
        print("house:", b)
    print(f"house: {len(graph)} files with project includes checked, {len(bad)} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
