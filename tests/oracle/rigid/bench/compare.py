#!/usr/bin/python3
"""Per-step CPU time of Siconos 4.4 against ours on the same steps.

Usage: compare.py SICONOS.csv OURS.csv [OURS.csv ...]

SICONOS.csv comes from siconos_rigid.py --bench N --per-step, each OURS.csv
from the spheres_in_box bench with PER_STEP (both started from the same
STATE_IN / --init file). For each step Siconos finished, prints both CPU
times (ours: the least over the given runs), the contacts of each and the
ratio, then the means over those steps (ours: the run of least total).
Our per-step CPU time has the scheduler tick's resolution (a few ms): a
step shorter than that may read 0; the means over many steps are exact.
"""
import csv
import sys


def rows(path):
    with open(path) as f:
        return {int(r["step"]): r for r in csv.DictReader(f)}


def main():
    siconos = rows(sys.argv[1])
    ours = [rows(p) for p in sys.argv[2:]]
    print("| step | Siconos CPU ms | active (Bullet points) | ours CPU ms | active (parry3d points) | Siconos / ours |")
    print("|---|---|---|---|---|---|")
    steps = sorted(siconos)
    for k in steps:
        s = siconos[k]
        cpu = min(float(run[k]["cpu_ms"]) for run in ours)
        o = ours[0][k]
        ratio = f"{float(s['cpu_ms']) / cpu:.0f}×" if cpu > 0 else "–"
        print(f"| {k} | {float(s['cpu_ms']):.0f} | {s['contacts']} ({s['interactions']}) | "
              f"{cpu:.1f} | {o['active']} ({o['contacts']}) | {ratio} |")
    total_s = sum(float(siconos[k]["cpu_ms"]) for k in steps)
    total_o = min(sum(float(run[k]["cpu_ms"]) for k in steps) for run in ours)
    n = len(steps)
    print(f"| {steps[0]}–{steps[-1]} (mean) | {total_s / n:.0f} | | {total_o / n:.1f} | | "
          f"{total_s / total_o:.0f}× |")


if __name__ == "__main__":
    main()
