"""Benchmarks of the Python package (figures in docs/python.md).

1. ``nonsmooth.run`` of the sliding-mode tutorial (examples/smc_tutorial.toml,
   10 000 steps) from Python, against the time spent in Rust for the same
   call (reading, building, simulating, keeping the rows: the library's
   loop plus the copy of the results) and against ``nonsmooth run`` (a
   process writing the CSV), best of several repetitions.
2. A sweep of N short runs of the tutorial (T = 0.1 s, 1 000 steps each):
   the single-core rate (one process, the sweep's batches run in turn,
   before any pool or cluster is started), then through a local process
   pool and a Dask LocalCluster with two workers, each alone; best and
   median of ``--repeat`` passes each, speed-up, per-run overhead (wall
   time × workers / runs − single-core time per run), and the CPU bound
   (workers × single-core CPU time / CPU time of all the sweep's
   processes: the speed-up with the cores to itself, less sensitive to
   other load than the wall).
3. The same sweep through ``nonsmooth sweep`` (rayon threads, one and two),
   timed from outside the process, when the release binary is built.

Each batch reads the scenario text once (``nonsmooth_runs::run_points``);
before 2026-11-26 every point read it again.

Usage: python python/benches/bench_python.py [--runs N] [--repeat R] [--batch B]
       [--cli PATH] [--no-run]
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

import nonsmooth

ROOT = pathlib.Path(__file__).resolve().parents[2]
SMC = ROOT / "examples" / "smc_tutorial.toml"


def best(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def bench_run(cli, repeat=20):
    wall, r = best(lambda: nonsmooth.run(SMC, events=False), repeat)
    native = min(nonsmooth.run(SMC, events=False).native_time for _ in range(repeat))
    print(f"run of smc_tutorial ({r.steps} steps, {len(r)} rows × {len(r.columns)} columns):")
    print(f"  nonsmooth.run from Python : {wall * 1e3:8.3f} ms  ({wall / r.steps * 1e6:.3f} µs/step)")
    print(f"  of which in Rust          : {native * 1e3:8.3f} ms  (ratio Python/Rust {wall / native:.2f})")
    wall_ev, _ = best(lambda: nonsmooth.run(SMC), repeat)
    print(f"  with the event log        : {wall_ev * 1e3:8.3f} ms")
    if cli:
        with tempfile.TemporaryDirectory() as d:
            c, _ = best(lambda: subprocess.run([cli, "run", "-q", str(SMC), "--out", d], check=True), 5)
        print(f"  nonsmooth run (CSV)       : {c * 1e3:8.3f} ms  ({c / wall:.1f}× the Python call)")


def bench_sweep(n, workers=2, batch=None, repeat=5):
    # Every point distinct (a sweep that repeated its points would let an
    # executor that merges identical tasks skip work: Dask did, before the
    # sweep's tasks carried their index).
    samples = [{"alpha": 1.0 + k / n} for k in range(n)]
    metrics = {"s": nonsmooth.final("controller.sigma[0]")}
    text = SMC.read_text()
    # The sweep's own batches (tasks of decreasing size, or ``batch``
    # points each when given): the single-core pass runs the same
    # batches, so that the speed-up compares the same work.
    from nonsmooth._sweep import batch_sizes, run_batch

    sizes = batch_sizes(n, workers, batch)
    common = dict(samples=samples, metrics=metrics, set={"t_end": 0.1}, batch=batch)

    def single_core():
        # The same batches, run in this process one after the other.
        start = 0
        for size in sizes:
            run_batch(text, str(SMC), [{**s, "t_end": 0.1} for s in samples[start:start + size]],
                      [metrics["s"]])
            start += size

    print(f"sweep of {n} runs of smc_tutorial, T = 0.1 (1 000 steps each), {workers} workers, "
          f"{len(sizes)} tasks of {sizes[0]} to {sizes[-1]} points, best and median of {repeat}:")
    from dask.distributed import Client, LocalCluster

    # The single-core passes first, with no pool or cluster alive (an idle
    # Dask cluster alone uses about a tenth of a core: it would slow the
    # baseline and flatter the speed-ups).
    times = {"single": [timed(single_core)[:2] for _ in range(repeat)], "pool": [], "dask": []}
    tables = []

    def passes(name, ex):
        # A small sweep first (the workers start and import nonsmooth), as
        # a user's pool or cluster is started once for many sweeps; the
        # timings are the sweep's own.
        nonsmooth.sweep(SMC, executor=ex, **dict(common, samples=samples[:2 * workers], batch=1))
        for _ in range(repeat):
            wall, cpu, table = timed(lambda: nonsmooth.sweep(SMC, executor=ex, **common))
            times[name].append((wall, cpu))
            tables.append(table)

    # Each executor alone on the machine (the pool's idle workers or an
    # idle cluster beside the other would take CPU from it).
    with ProcessPoolExecutor(max_workers=workers) as pool:
        passes("pool", pool)
    with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        passes("dask", client.get_executor())

    single = min(w for w, _ in times["single"])
    single_med = statistics.median(w for w, _ in times["single"])
    cpu1 = statistics.median(c for _, c in times["single"])
    per_run = single / n
    print(f"  single core    : {single:7.3f} s  {n / single:8.0f} runs/s  ({per_run * 1e6:.0f} µs/run; "
          f"median {single_med:.3f} s)")
    for name in ("pool", "dask"):
        wall = min(w for w, _ in times[name])
        med = statistics.median(w for w, _ in times[name])
        cpu = statistics.median(c for _, c in times[name])
        overhead = wall * workers / n - per_run
        # CPU bound: the speed-up the sweep would have with the cores to
        # itself, from the CPU time of every process (client, scheduler,
        # workers) against the single-core pass's.
        print(f"  {name:<15}: {wall:7.3f} s  {n / wall:8.0f} runs/s  speed-up {single / wall:.2f}× "
              f"(medians {single_med / med:.2f}×)  overhead {overhead * 1e6:+.0f} µs/run  "
              f"CPU bound {workers * cpu1 / cpu:.2f}×")
    for t in tables[1:]:
        assert tables[0].equals(t), "the process pool and Dask tables differ"
    assert tables[0]["error"].isna().all()


def timed(f):
    """Wall time, CPU time of this process and all its descendants, and
    f's value."""
    import psutil

    def cpu():
        me = psutil.Process()
        total = sum(me.cpu_times()[:2])
        for c in me.children(recursive=True):
            try:
                total += sum(c.cpu_times()[:2])
            except psutil.NoSuchProcess:
                pass
        return total

    c = cpu()
    t = time.perf_counter()
    out = f()
    wall = time.perf_counter() - t
    return wall, cpu() - c, out


def bench_cli_sweep(cli, n, workers=2):
    # Decimal texts (α = 1 + k/n to 6 digits): one --grid argument stays
    # under the kernel's limit for one argument (128 kB).
    grid = "alpha=" + ",".join(f"{1 + k / n:.6f}" for k in range(n))
    print(f"nonsmooth sweep of {n} runs (same scenario and metric):")
    for jobs in sorted({1, workers}):
        with tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            subprocess.run([cli, "sweep", str(SMC), "--grid", grid, "--set", "t_end=0.1",
                            "--metric", "final(controller.sigma[0])", "-o", os.path.join(d, "t.csv"),
                            "-j", str(jobs), "-q"], check=True)
            wall = time.perf_counter() - t
        print(f"  -j {jobs}           : {wall:7.2f} s  {n / wall:8.0f} runs/s")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=10_000)
    p.add_argument("--batch", type=int, default=None, help="points per task (default: the sweep's)")
    p.add_argument("--repeat", type=int, default=5, help="passes of each: single core, pool, Dask")
    p.add_argument("--no-run", action="store_true", help="the sweeps only, not the runs of part 1")
    default_cli = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release" / "nonsmooth"
    p.add_argument("--cli", default=str(default_cli) if default_cli.exists() else None)
    a = p.parse_args()
    if not a.no_run:
        bench_run(a.cli)
    print(f"load average before the sweeps: {os.getloadavg()}")
    bench_sweep(a.runs, batch=a.batch, repeat=a.repeat)
    if a.cli:
        bench_cli_sweep(a.cli, a.runs)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
