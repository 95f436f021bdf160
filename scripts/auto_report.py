#!/usr/bin/env python3
"""Reads dlconv-bench CSV files run with several explicit algorithms (--algo auto,direct,...)
and lists, per layer, the fastest explicit algorithm, what AUTO ran and how far it is from the
best: the data the AUTO heuristic in src/api/auto.c is tuned from.

    scripts/auto_report.py run1.csv [run2.csv ...] [--misses]"""
import csv
import sys
from collections import defaultdict


def main(argv):
    only_misses = '--misses' in argv
    files = [a for a in argv if not a.startswith('--')]
    rows = defaultdict(dict)
    shape = {}
    for f in files:
        for r in csv.DictReader(open(f)):
            if r['status'] != 'ok':
                continue
            key = (r['model'], r['layer'], r['layout'], r['threads'])
            rows[key][r['algo']] = (float(r['ms']), r['impl'])
            shape[key] = r
    hit = total = 0
    for key, algos in rows.items():
        explicit = {a: v for a, v in algos.items() if a != 'auto' and not a.startswith('onednn')}
        if 'auto' not in algos or not explicit:
            continue
        best = min(explicit, key=lambda a: explicit[a][0])
        ratio = algos['auto'][0] / explicit[best][0]
        total += 1
        hit += ratio <= 1.10
        if only_misses and ratio <= 1.10:
            continue
        s = shape[key]
        desc = (f"{s['c_in']}x{s['h_in']}x{s['w_in']}>{s['c_out']} k{s['k_h']}x{s['k_w']}/"
                f"{s['stride_h']} g{s['groups']} out{s['h_out']}x{s['w_out']}")
        times = ' '.join(f"{a}={v[0]:.3f}" for a, v in sorted(explicit.items()))
        print(f"{key[0]:<14} {key[1]:<24} {key[2]} t{key[3]} {desc:<36} best={best:<7} "
              f"auto={algos['auto'][1]:<14} {ratio:5.2f}  {times}")
    if total:
        print(f"AUTO within 10% of best on {hit}/{total} layers ({100.0 * hit / total:.0f}%)")


if __name__ == '__main__':
    main(sys.argv[1:])
