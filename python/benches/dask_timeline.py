"""Where the two cores go during a Dask sweep (figures in docs/python.md).

On a warm ``LocalCluster(n_workers=2, threads_per_worker=1)`` this runs
the benchmark's sweep (N runs of the sliding-mode tutorial, T = 0.1)
several times and prints, for each:

* the CPU time of every thread that used any (psutil): the client's main
  thread, the IO loop the client shares with the scheduler, each
  worker's event loop and executor thread;
* the task timeline (``get_task_stream``): when each worker started its
  first task after the call, how far apart the two workers' last tasks
  ended (the tail), how long the call took after the last task ended,
  and the idle fraction Σ_w (wall − busy_w) / (2 wall);

then the median of the timeline figures, and the CPU an idle cluster
uses (percent of one core over 3 s).

Usage: python python/benches/dask_timeline.py [--runs N] [--reps R] [--batch B]
"""

import argparse
import collections
import os
import pathlib
import statistics
import threading
import time

import psutil

import nonsmooth

SMC = pathlib.Path(__file__).resolve().parents[2] / "examples" / "smc_tutorial.toml"


def thread_times(procs):
    out = {}
    for p in procs:
        try:
            for t in p.threads():
                out[t.id] = t.user_time + t.system_time
        except psutil.NoSuchProcess:
            pass
    return out


def all_cpu(procs):
    total = 0.0
    for p in procs:
        try:
            total += sum(p.cpu_times()[:2])
        except psutil.NoSuchProcess:
            pass
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--batch", type=int, default=None)
    a = ap.parse_args()
    from dask.distributed import Client, LocalCluster, get_task_stream

    n = a.runs
    samples = [{"alpha": 1.0 + k / n} for k in range(n)]
    common = dict(samples=samples, metrics={"s": nonsmooth.final("controller.sigma[0]")},
                  set={"t_end": 0.1}, batch=a.batch)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        ex = client.get_executor()
        nonsmooth.sweep(SMC, executor=ex, **dict(common, samples=samples[:4], batch=1))
        me = psutil.Process()
        procs = [me] + me.children(recursive=True)
        names = {t.native_id: "client:" + t.name for t in threading.enumerate()}
        info = client.run(lambda: (os.getpid(), [(t.name, t.native_id) for t in threading.enumerate()]))
        for pid, threads in info.values():
            for name, tid in threads:
                names[tid] = f"worker {pid}:{name[:24]}"
        rows = []
        for rep in range(a.reps):
            before = thread_times(procs)
            c0 = time.time()
            with get_task_stream(client) as ts:
                t = time.perf_counter()
                nonsmooth.sweep(SMC, executor=ex, **common)
                wall = time.perf_counter() - t
            after = thread_times(procs)
            cpu = collections.Counter()
            for tid, v in after.items():
                if v > before.get(tid, 0.0):
                    cpu[names.get(tid, f"thread {tid}")] += v - before.get(tid, 0.0)
            tasks = collections.defaultdict(list)
            for s in ts.data:
                for ss in s["startstops"]:
                    if ss["action"] == "compute" and "run_batch" in str(s["key"]):
                        tasks[s["worker"]].append((ss["start"] - c0, ss["stop"] - c0))
            firsts = sorted(min(x for x, _ in iv) for iv in tasks.values())
            lasts = [max(y for _, y in iv) for iv in tasks.values()]
            busy = [sum(y - x for x, y in iv) for iv in tasks.values()]
            idle = sum(wall - b for b in busy) / (2 * wall)
            rows.append((firsts[0], firsts[-1], max(lasts) - min(lasts), wall - max(lasts), idle, wall))
            print(f"sweep {rep + 1}: wall {wall * 1e3:.0f} ms, load {os.getloadavg()[0]:.1f}, "
                  f"{sum(len(iv) for iv in tasks.values())} tasks, CPU {sum(cpu.values()):.2f} s: "
                  + ", ".join(f"{k} {v:.2f}" for k, v in cpu.most_common(7)))
        med = [statistics.median(c) for c in zip(*rows)]
        print(f"median of {a.reps}: first task started {med[0] * 1e3:.0f} ms and {med[1] * 1e3:.0f} ms "
              f"after the call, last tasks ended {med[2] * 1e3:.0f} ms apart, call returned "
              f"{med[3] * 1e3:.0f} ms after the last, idle fraction {med[4]:.3f}, wall {med[5] * 1e3:.0f} ms")
        c, t = all_cpu(procs), time.perf_counter()
        time.sleep(3)
        print(f"idle cluster: {(all_cpu(procs) - c) / (time.perf_counter() - t) * 100:.1f} % of one core")


if __name__ == "__main__":
    main()
