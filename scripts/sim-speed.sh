#!/usr/bin/env bash
# sim-speed.sh OLD NEW [REPS]: events/s of the Chat runs (smp-8, numa-4x4 × dss, mqs, pmqs × two sizes), two schedlab binaries interleaved, median per run.
old=$1; new=$2; reps=${3:-3}
for m in smp-8 numa-4x4; do for p in dss mqs pmqs:pool=4,lb=lbp,period=10; do for w in chat:rooms=10,messages=100 chat:rooms=30,messages=300; do
  o=(); n=()
  for r in $(seq $reps); do
    o+=($($old sim --machine $m --policy $p --workload $w --format json | grep events_per_sec | tr -dc '0-9.'))
    n+=($($new sim --machine $m --policy $p --workload $w --format json | grep events_per_sec | tr -dc '0-9.'))
  done
  mo=$(printf '%s\n' "${o[@]}" | sort -g | sed -n "$(( (reps+1)/2 ))p"); mn=$(printf '%s\n' "${n[@]}" | sort -g | sed -n "$(( (reps+1)/2 ))p")
  awk -v m=$m -v p=$p -v w=$w -v a=$mo -v b=$mn 'BEGIN{printf "%-9s %-30s %-28s old %6.2fM new %6.2fM  new/old %.3f\n", m,p,w,a/1e6,b/1e6,b/a}'
done; done; done
