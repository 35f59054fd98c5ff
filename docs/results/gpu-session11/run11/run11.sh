#!/usr/bin/env bash
# session 11, lease 11: the own rows' left entries counted and copied on all cores (2 ranks sharing one H200; old: HEAD before)
R=$OUT/run11; mkdir -p $R; trap 'cd $OUT && tar czf run11.tgz run11' EXIT
. scripts/env.sh
bin/ab.sh $R d200np2share 2 -gpu.share -problem diffusion:200 -prec afsai
