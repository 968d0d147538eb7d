#!/bin/sh
# Siconos 4.4 cost per time step of the bundled examples (see README.md).
#
#   benches/siconos/run.sh            build, check against tests/oracle/examples, run the table
#                                     (about 15 min: the resting column of 1000 beads alone
#                                     takes 8-13 min)
#   benches/siconos/run.sh --quick    N = 1000 falling/resting with T = 0.1 instead of 1
#   benches/siconos/run.sh --no-check skip the CSV comparison
#
# Needs g++ and the Debian packages libsiconos-kernel-dev, libsiconos-numerics-dev,
# libsiconos-control-dev
# (and their boost headers). Not part of the Rust build or tests.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-${TMPDIR:-/tmp}/nonsmooth-siconos-bench}
mkdir -p "$build"

quick=0
check=1
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    --no-check) check=0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

CXX=${CXX:-g++}
inc="-I/usr/include/siconos/kernel -I/usr/include/siconos/numerics -I/usr/include/siconos"
echo "compiling with $CXX -O2 ..." >&2
$CXX -O2 -std=c++17 $inc "$here/siconos_examples.cpp" -o "$build/siconos_examples" \
  -lsiconos_kernel -lsiconos_numerics
bin="$build/siconos_examples"
$CXX -O2 -std=c++17 $inc -I/usr/include/siconos/control "$here/siconos_control.cpp" \
  -o "$build/siconos_control" -lsiconos_control -lsiconos_kernel -lsiconos_numerics

if [ "$check" = 1 ]; then
  # The C++ models must give the committed Python reference trajectories.
  for c in bouncing_ball diode_bridge relay \
           "beads_falling 10:beads_column_falling_10" \
           "beads_resting 10:beads_column_resting_10" \
           "beads_resting_overlap 10:beads_column_resting_overlap_10"; do
    args=${c%%:*}
    name=${c#*:}
    # shellcheck disable=SC2086
    "$bin" $args --csv "$build/$name.csv" > /dev/null
    /usr/bin/python3 - "$build/$name.csv" "$repo/tests/oracle/examples/$name.csv" <<'EOF'
import sys
def read(p):
    with open(p) as f:
        h = f.readline().strip().split(",")
        return h, [[float(x) for x in l.split(",")] for l in f if l.strip()]
h1, r1 = read(sys.argv[1]); h2, r2 = read(sys.argv[2])
assert h1 == h2, "header differs"
assert len(r1) == len(r2), "row count differs"
d = max(abs(a - b) for x, y in zip(r1, r2) for a, b in zip(x, y))
name = sys.argv[2].rsplit("/", 1)[-1]
print("check %-36s max |C++ - Python| = %.3g" % (name, d), file=sys.stderr)
assert d <= 1e-12, "C++ and Python trajectories differ"
EOF
  done
fi

T1000=1
[ "$quick" = 1 ] && T1000=0.1

run() {  # example N repeat [T]
  ex=$1; n=$2; rep=$3; T=${4:-}
  if [ "$ex" = bouncing_ball ] || [ "$ex" = bouncing_ball_ed ] || [ "$ex" = diode_bridge ] || [ "$ex" = relay ]; then
    set -- "$ex"
  else
    set -- "$ex" "$n"
  fi
  [ -n "$T" ] && set -- "$@" --T "$T"
  "$bin" "$@" --repeat "$rep"
}

{
  run bouncing_ball 1 5
  # event-driven (EventDriven + LsodarOSI): "steps" are the events processed
  # (outputs every 5e-3 s and impacts); the per-run figure is wall total
  run bouncing_ball_ed 1 5
  run diode_bridge 1 5
  run relay 1 5
  for n in 10 100; do
    run beads_falling "$n" 3
    run beads_resting "$n" 3
    run beads_resting_overlap "$n" 3
  done
  run beads_falling 1000 1 "$T1000"
  run beads_resting 1000 1 "$T1000"
  # every contact is active at every step, so the cost per step is the same
  # from the first step on: 20 steps are enough
  run beads_resting_overlap 1000 1 0.02
  for law in implicit explicit ot2; do
    "$build/siconos_control" "$law" --repeat 5
  done
} | awk 'BEGIN {
  printf "| example | N | steps | h | T | wall total [s] | wall [us/step] | CPU total [s] | CPU [us/step] |\n"
  printf "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
  h["bouncing_ball"] = "5e-3"; h["diode_bridge"] = "1e-6"; h["relay"] = "1e-2"
  h["smc_implicit"] = "1e-4"; h["smc_explicit"] = "1e-4"; h["smc_ot2"] = "1e-4"
  h["bouncing_ball_ed"] = "5e-3"
}
$1 == "RESULT" {
  hh = ($2 in h) ? h[$2] : "1e-3"
  if ($2 ~ /^smc_/) {
    # control lines carry no N: steps wall wall/step cpu cpu/step
    printf "| %s | 1 | %d | %s | %g | %.4g | %.4g | %.4g | %.4g |\n", $2, $3, hh, $3 * hh, $4, $5, $6, $7
  } else {
    T = ($2 == "bouncing_ball_ed") ? 10 : $4 * hh
    printf "| %s | %s | %d | %s | %g | %.4g | %.4g | %.4g | %.4g |\n", $2, $3, $4, hh, T, $5, $6, $7, $8
  }
}'
echo "date: $(date -u +%Y-%m-%d), $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
