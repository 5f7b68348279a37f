#!/usr/bin/python3
"""bench_day: a simulated day, timed against another build in one run.

Runs bench_simulate of each build on the same scenario, interleaved
(build A, build B, A, B, ...), and prints for each the CPU time (user +
system, from the child's rusage), wall time and peak RSS, minimum and
median, the simulated outcome (which must be the same for equal
policies), and the ratio of the medians of B to A. Interleaving keeps
the ratio fair on a machine shared with other work.

  bench/bench_day.py [--runs N] [--scenario FILE] BUILD_A [BUILD_B]

BUILD is a build directory (its bench/bench_simulate is run) with the
policy of its source tree (SOURCE/policies/default.lua, SOURCE being the
directory above BUILD), or a bench_simulate binary. Without BUILD_B only
BUILD_A is timed.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def binary_and_policy(build):
    if os.path.isfile(build) and os.access(build, os.X_OK):
        exe = build
        src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(exe))))
    else:
        exe = os.path.join(build, "bench", "bench_simulate")
        src = os.path.dirname(os.path.abspath(build.rstrip("/")))
    if not os.access(exe, os.X_OK):
        sys.exit("bench_day: no bench_simulate at %s (build it: cmake --build BUILD "
                 "--target bench_simulate)" % exe)
    policy = os.path.join(src, "policies", "default.lua")
    if not os.path.isfile(policy):
        sys.exit("bench_day: no policy at %s" % policy)
    return exe, policy


def run_once(exe, scenario, policy):
    t0 = time.monotonic()
    proc = subprocess.Popen([exe, scenario, policy], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit("bench_day: %s failed (%d): %s" % (exe, proc.returncode, err.strip()))
    outcome, rss = "", 0.0
    for line in out.splitlines():
        if line.startswith("outcome"):
            outcome = line.split(None, 1)[1]
        elif line.startswith("peak RSS"):
            rss = float(line.split()[2])
    return wall, outcome, rss


def timed(exe, scenario, policy):
    before = os.times()
    wall, outcome, rss = run_once(exe, scenario, policy)
    after = os.times()
    cpu = (after.children_user - before.children_user) + \
        (after.children_system - before.children_system)
    return cpu, wall, outcome, rss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scenario", default=None)
    ap.add_argument("builds", nargs="+")
    a = ap.parse_args()
    if len(a.builds) > 2:
        sys.exit("bench_day: at most two builds")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    scenario = a.scenario or os.path.join(here, "examples", "scenarios", "scale-day.yaml")
    if not os.path.isfile(scenario):
        sys.exit("bench_day: no scenario at %s" % scenario)
    builds = [binary_and_policy(b) for b in a.builds]
    results = [{"cpu": [], "wall": [], "rss": [], "outcome": set()} for _ in builds]
    print("scenario  %s" % scenario)
    for r in range(a.runs):
        for i, (exe, policy) in enumerate(builds):
            cpu, wall, outcome, rss = timed(exe, scenario, policy)
            results[i]["rss"].append(rss)
            results[i]["cpu"].append(cpu)
            results[i]["wall"].append(wall)
            results[i]["outcome"].add(outcome)
            print("run %d  %s  cpu %.2f s  wall %.2f s" % (r + 1, "AB"[i], cpu, wall), flush=True)
    for i, (exe, policy) in enumerate(builds):
        res = results[i]
        print("%s  %s" % ("AB"[i], exe))
        print("   cpu min/median  %.2f / %.2f s" % (min(res["cpu"]), statistics.median(res["cpu"])))
        print("   wall min/median %.2f / %.2f s" % (min(res["wall"]), statistics.median(res["wall"])))
        print("   peak RSS max    %.1f MB" % max(res["rss"]))
        for o in sorted(res["outcome"]):
            print("   outcome         %s" % o)
    if len(builds) == 2:
        ra = statistics.median(results[0]["cpu"])
        rb = statistics.median(results[1]["cpu"])
        wa = statistics.median(results[0]["wall"])
        wb = statistics.median(results[1]["wall"])
        print("B/A  cpu %.2f  wall %.2f" % (rb / ra if ra else 0, wb / wa if wa else 0))
        if results[0]["outcome"] != results[1]["outcome"]:
            print("note: the outcomes differ")


if __name__ == "__main__":
    main()
