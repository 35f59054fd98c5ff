#!/usr/bin/env bash
# session 13, lease 13: joinKept frees the state of a held run with several batches before joining them (unless a second part follows); GPU tests, solves on one and two GPUs
R=$OUT/run13; mkdir -p $R; trap 'cd $OUT && tar czf run13.tgz run13' EXIT
. scripts/env.sh
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose|FreeLater' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)' $R/gputest.log | head -3; grep -B2 -A8 -- '--- FAIL' $R/gputest.log | head -30
P="-problem diffusion:200 -prec afsai"
for np in 1 2; do mpirun -np $np --bind-to none bin/fsai-dist -backend cuda $P -progress 0 -report $R/solve$np.json > $R/solve$np.log 2>&1; echo "solve$np rc $?"
python3 -c "import json;r=json.load(open('$R/solve$np.json'));p=r['prec_info'];print('solve$np', r['iterations'], r['relres'], 'prec', r['prec_setup_s'], 'solve', r['solve_s'], 'early_rows', p.get('early_rows'))"; done
