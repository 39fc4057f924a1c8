#!/usr/bin/env bash
# policy-tables.sh SCHEDLAB {cfs|eevdf|pmqs}: print the "Observed" table of that policy's
# section in docs/policies.md (simulator, seed 1, --check), from runs of the given binary.
set -euo pipefail
bin=$1; which=$2
run() { "$bin" sim --machine "$1" --policy "$2" --workload "$3" --seed 1 --check --format json 2>/dev/null; }
row() { # machine workload policy label
  run "$1" "$3" "$2" | python3 -c '
import json, sys
d = json.load(sys.stdin); lab, first = sys.argv[1], sys.argv[2] == "1"
unit = d["throughput_unit"].replace("messages/s", "msg/s").replace("round trips/s", "rounds/s")
def t(ns):
    return f"{ns/1e3:.1f} µs" if ns < 1e6 else f"{ns/1e6:.1f} ms" if ns < 1e9 else f"{ns/1e9:.2f} s"
w = d["wakeup_latency_ns"]
p50, p99, mx = t(w["p50"]), t(w["p99"]), t(w["max"])
lat = p50 if "pingpong" in d["workload"] else p50 + " / " + p99 + " / " + mx
head = d["machine"] + ", `" + d["workload"] + "`" if first else ""
print("| %s | %s | %s %s | %s |" % (head, d["policy"], format(round(d["throughput"]), ","), unit, lat))
' "$4" "$5"
}
echo "| machine, workload | policy | throughput | wake-up latency p50 / p99 / max |"
echo "|---|---|---|---|"
case $which in
  cfs)
    for p in cfs o1 dss mqs; do row smp-4 "chat:rooms=4,messages=50" $p "" $([ $p = cfs ] && echo 1 || echo 0); done
    for p in cfs o1; do row up "chat:rooms=4,messages=50" $p "" $([ $p = cfs ] && echo 1 || echo 0); done
    for p in cfs o1; do row numa-4x4 "chat:rooms=4,messages=50" $p "" $([ $p = cfs ] && echo 1 || echo 0); done
    for p in cfs o1; do row numa-4x4 "hackbench:groups=2,loops=50" $p "" $([ $p = cfs ] && echo 1 || echo 0); done
    for p in cfs o1; do row smp-4 "pingpong:rounds=2000" $p "" $([ $p = cfs ] && echo 1 || echo 0); done ;;
  eevdf)
    for m in "smp-4 chat:rooms=4,messages=50" "up chat:rooms=4,messages=50" "numa-4x4 hackbench:groups=2,loops=50" "smp-4 pingpong:rounds=2000"; do
      set -- $m
      row "$1" "$2" eevdf "" 1; row "$1" "$2" cfs "" 0
    done ;;
  *) echo "policy-tables.sh: unknown table '$which' (cfs, eevdf)" >&2; exit 2 ;;
esac
