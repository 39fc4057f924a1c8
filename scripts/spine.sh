#!/usr/bin/env bash
# The spine's experiment matrix: DSS and MQS on smp-8 and numa-4x4 for Chat (10,100),
# (20,200), (30,300), hackbench and ping-pong. Prints a table; JSON per run in out/spine/.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p schedlab
bin=target/release/schedlab
out=${OUT:-out/spine}
mkdir -p "$out"
workloads=(chat:rooms=10,messages=100 chat:rooms=20,messages=200 chat:rooms=30,messages=300 hackbench:groups=4,loops=100 pingpong:rounds=100000)
printf '%-10s %-30s %-5s %14s %-13s %9s %9s %10s %12s %9s\n' machine workload policy throughput unit "rq-lock%" "util%" "hold-ns" "events/s" wall-s
for m in smp-8 numa-4x4; do
  for w in "${workloads[@]}"; do
    for p in dss mqs; do
      f="$out/${m}_${p}_${w//[:=,]/_}.json"
      "$bin" sim --machine "$m" --policy "$p" --workload "$w" --format json > "$f"
      python3 - "$f" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
lk = r["locks"][0] if r["locks"] else {"contention_pct": 0, "utilisation_pct": 0, "hold_mean_ns": 0}
unit = r["throughput_unit"].replace(" ", "_")
print(f'{r["machine"]:<10} {r["workload"]:<30} {r["policy"]:<5} {r["throughput"]:14.1f} {unit:<13} {lk["contention_pct"]:9.2f} {lk["utilisation_pct"]:9.2f} {lk["hold_mean_ns"]:10.0f} {r["events_per_sec"]:12.3e} {r["wall_s"]:9.3f}')
PY
    done
  done
done
