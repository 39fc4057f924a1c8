#!/usr/bin/env bash
# Trace round trip: the real runtime records a small Chat run → the file is
# checked against the Chrome/Perfetto trace-event format by an independent parser
# (python3's json, not schedlab's code) → `schedlab sim --workload trace:FILE` replays
# it under two policies and must complete (every replayed wake-up received).
# Usage: scripts/ci-trace-roundtrip.sh [path/to/schedlab]   (no perf needed)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/schedlab}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
start=$(date +%s)

timeout 120 "$bin" validate --quick --trace "$out/t" > "$out/validate.txt" 2> "$out/validate.err" \
  || { cat "$out/validate.err"; echo "trace round trip: validate --quick --trace failed"; exit 1; }
trace="$out/t-real-chat_rooms_1_messages_40-dss.json"
test -s "$trace" || { echo "trace round trip: no runtime trace $trace"; ls "$out"; exit 1; }

python3 - "$trace" <<'PY'
import json, sys
path = sys.argv[1]
doc = json.load(open(path))
evs = doc["traceEvents"]
assert isinstance(evs, list) and evs, "traceEvents is not a non-empty array"
for k, e in enumerate(evs):
    for f in ("ph", "pid", "tid"):
        assert f in e, f"traceEvents[{k}] has no {f}"
    if e["ph"] != "M":
        assert isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, f"traceEvents[{k}]: bad ts"
    if e["ph"] == "X":
        assert isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, f"traceEvents[{k}]: bad dur"
slices = sum(1 for e in evs if e["ph"] == "X" and e["pid"] == 1)
wakes = sum(1 for e in evs if e.get("name") == "wakeup")
assert slices > 0 and wakes > 0, f"{slices} run slices, {wakes} wake-ups"
print(f"trace round trip: {path}: {len(evs)} events, {slices} run slices, {wakes} wake-ups: Perfetto format ok")
PY

for p in dss mqs; do
  timeout 60 "$bin" sim --machine smp-2 --policy "$p" --workload "trace:$trace" --format json > "$out/sim-$p.json" 2> "$out/sim-$p.err" \
    || { cat "$out/sim-$p.err"; echo "trace round trip: replay under $p failed"; exit 1; }
  head -1 "$out/sim-$p.err"
  python3 - "$out/sim-$p.json" "$p" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
sent, got = r["messages_sent"], r["messages_received"]
assert sent > 0 and got == sent and r["completed"] == sent, f"{sys.argv[2]}: {got} of {sent} replayed wake-ups received"
print(f"trace round trip: replay under {sys.argv[2]}: {got} wake-ups, {r['tasks']} tasks, {r['virtual_ns']} virtual ns: completed")
PY
done
echo "trace round trip: $(( $(date +%s) - start )) s"
