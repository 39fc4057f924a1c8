#!/usr/bin/env bash
# sim-speed.sh OLD NEW [REPS] [SUFFIX]: events/s of the Chat runs (smp-8, numa-4x4 × dss, mqs, pmqs × two
# sizes), two schedlab binaries interleaved, median per run, with each run's context switches. Also
# the wall time per simulated context switch (median run's), since a model change that alters the
# schedule changes how much work an event is: "per switch" is old µs/switch ÷ new µs/switch (> 1: the
# new binary is faster per switch). SUFFIX (e.g. ":l2=64m", where no L2 set can evict) is appended
# to the NEW binary's machine only.
old=$1; new=$2; reps=${3:-3}; suffix=${4:-}
run() { "$1" sim --machine "$2" --policy "$3" --workload "$4" --format json \
  | tr -d ' ,' | awk -F: '/"events_per_sec"/{e=$2} /"wall_s"/{w=$2} /"context_switches"/{if(!c)c=$2} END{print e, w/c*1e6, c}'; }
for m in smp-8 numa-4x4; do for p in dss mqs pmqs:pool=4,lb=lbp,period=10; do for w in chat:rooms=10,messages=100 chat:rooms=30,messages=300; do
  o=(); n=()
  for r in $(seq $reps); do o+=("$(run $old $m $p $w)"); n+=("$(run $new $m$suffix $p $w)"); done
  mid=$(( (reps+1)/2 ))
  read eo so co <<<"$(printf '%s\n' "${o[@]}" | sort -g | sed -n "${mid}p")"
  read en sn cn <<<"$(printf '%s\n' "${n[@]}" | sort -g | sed -n "${mid}p")"
  awk -v m=$m$suffix -v p=$p -v w=$w -v a=$eo -v b=$en -v sa=$so -v sb=$sn -v ca=$co -v cb=$cn 'BEGIN{printf "%-9s %-30s %-28s old %6.2fM new %6.2fM  new/old %.3f  switches old %8d new %8d  µs/switch old %.2f new %.2f  per switch %.3f\n", m,p,w,a/1e6,b/1e6,b/a,ca,cb,sa,sb,sa/sb}'
done; done; done
