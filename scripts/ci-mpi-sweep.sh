#!/usr/bin/env bash
# `schedlab sweep --mpi` on K ranks (default 2) must write the files a local sweep of the
# same experiment writes, byte for byte (timing.json, the wall-clock file, aside).
# Needs an MPI library, its mpirun and libclang (docs/mpi.md). Exits non-zero on
# any difference, naming the file.
#   scripts/ci-mpi-sweep.sh [EXPERIMENT] [RANKS]     (default experiments/chat-smp.toml 2, --quick)
set -euo pipefail
cd "$(dirname "$0")/.."
exp=${1:-experiments/chat-smp.toml}
ranks=${2:-2}
nice cargo build --release -q -p schedlab --features mpi
bin=target/release/schedlab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# --allow-run-as-root: CI containers run as root; --oversubscribe: more ranks than cores.
timeout 600 mpirun --allow-run-as-root --oversubscribe -np "$ranks" "$bin" sweep --mpi --quick "$exp" --out "$tmp/mpi" >"$tmp/mpi.log"
timeout 600 "$bin" sweep --quick "$exp" --out "$tmp/local" >"$tmp/local.log"
status=0
for f in results.json results.csv table.md chart.svg; do
  if cmp -s "$tmp/mpi/$f" "$tmp/local/$f"; then
    echo "ci-mpi-sweep: $f identical ($ranks ranks vs local)"
  else
    echo "ci-mpi-sweep: $f DIFFERS between the $ranks-rank sweep and the local one:" >&2
    diff "$tmp/mpi/$f" "$tmp/local/$f" | head -20 >&2 || true
    status=1
  fi
done
# Every run must be there: a rank that ran nothing would still give equal empty files.
runs=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["runs"]))' "$tmp/mpi/results.json")
if [ "$runs" -eq 0 ]; then
  echo "ci-mpi-sweep: results.json has no runs" >&2
  status=1
fi
exit $status
