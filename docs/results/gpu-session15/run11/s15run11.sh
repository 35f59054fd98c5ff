#!/usr/bin/env bash
# session 15, run 11: timing prints of static FSAI with its systems on the device (the run10 patch), one GPU
R=$OUT/run11; mkdir -p $R; trap 'cd $OUT && tar czf run11.tgz run11' EXIT
. scripts/env.sh
FSAI_DBG=1 bin/fsai-dbg -backend cuda -problem diffusion:200 -prec fsai -maxit 1 -progress 0 -report $R/d200.json > $R/d200.log 2>&1
grep DBG $R/d200.log | grep -E "static|pF|fc|matrix|setup" | head -40
grep -E "setup" $R/d200.log | tail -2
