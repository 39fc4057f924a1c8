#!/usr/bin/env bash
# sim-same.sh A B: do two schedlab binaries give the same results (JSON minus wall-clock fields, `fair` read as `cfs`) on 11 runs covering the cache model, colouring, NUMA, O(1), cfs (by its alias `fair`, which older binaries also parse) and eevdf? Exit 1 if not.
a=$1; b=$2; bad=0
for c in "smp-8 dss chat:rooms=4,messages=50" "smp-8:l2=512k dss chat:rooms=4,messages=50" "smp-8:l2=512k dss:colours=32 webbench:servers=64,clients=32,requests=4" "numa-4x4 dss chat:rooms=4,messages=50" "numa-4x4 mqs chat:rooms=4,messages=50" "numa-4x4 pmqs:pool=4,lb=lbp,period=10 hackbench:groups=2,loops=50" "ppro-4:l2=256k mqs:colours=8 webbench:servers=128,clients=32,requests=4" "xeon-4 o1 netbench:clients=8" "up fair chat:rooms=1,messages=20" "smp-8 fair hackbench:groups=4,loops=100" "numa-4x4 eevdf chat:rooms=4,messages=50"; do
  set -- $c
  x=$($a sim --machine $1 --policy $2 --workload $3 --format json 2>&1 | grep -v -E '"(wall_s|events_per_sec)"' | sed -E 's/"policy": "fair/"policy": "cfs/' | md5sum)
  y=$($b sim --machine $1 --policy $2 --workload $3 --format json 2>&1 | grep -v -E '"(wall_s|events_per_sec)"' | sed -E 's/"policy": "fair/"policy": "cfs/' | md5sum)
  [ "$x" = "$y" ] && echo "same  $c" || { echo "DIFF  $c"; bad=1; }
done
exit $bad
