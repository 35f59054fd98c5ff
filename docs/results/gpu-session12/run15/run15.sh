#!/usr/bin/env bash
# session 12, lease 15: the review's refactor (5a01fba): GPU tests of the set-up and a solve on two GPUs
R=$OUT/run15; mkdir -p $R; trap 'cd $OUT && tar czf run15.tgz run15' EXIT
. scripts/env.sh
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)' $R/gputest.log | head -3
mpirun -np 2 --bind-to none bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -progress 0 -report $R/solve2.json > $R/solve2.log 2>&1; echo "solve2 rc $?"
python3 -c "import json;r=json.load(open('$R/solve2.json'));p=r['prec_info'];print('solve2', r['iterations'], r['relres'], r['prec_setup_s'], r['solve_s'], 'early_rows', p.get('early_rows'))"
