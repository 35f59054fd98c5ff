#!/bin/bash
# session 10, run 2: GPU tests of the fused r'r / r'z; A/B of PCG with aFSAI
# (bin/fsai-dist-old: before, bin/fsai-dist: after); bench-afsai-gpu.sh and
# bench-library.sh with the new code; factor widths with columns per lane.
cd "$(dirname "$0")/.."
. scripts/env.sh
R=$OUT/run2; mkdir -p $R
trap 'cd $OUT && tar czf run2.tgz run2' EXIT
(cd gpu && ../bin/gpu.test -test.run 'KernelsCompile|SpMM|SpMVDot|BlockVectorOps|BlockErrors' -test.v) > $R/gpu-test.log 2>&1
echo "gpu.test rc=$?" | tee -a $R/summary.txt
(cd pcg && ../bin/pcg.test -test.run 'OnGPU' -test.v) > $R/pcg-test.log 2>&1
echo "pcg.test rc=$?" | tee -a $R/summary.txt
ab() { # name args...
  name=$1; shift
  for rep in 1 2; do
    for v in old new; do
      b=bin/fsai-dist; [ $v = old ] && b=bin/fsai-dist-old
      $b -backend cuda -progress 0 "$@" -report $R/ab-$name-$v-$rep.json > /dev/null 2>>$R/ab.err
    done
  done
}
ab p200-afsai-k1 -problem poisson7:200 -prec afsai
ab p200-afsai-k8 -problem poisson7:200 -prec afsai -nrhs 8
ab d200-afsai -problem diffusion:200 -prec afsai
python3 - $R <<'PY' | tee -a $R/summary.txt
import json, glob, os, sys
R = sys.argv[1]
for name in ("p200-afsai-k1", "p200-afsai-k8", "d200-afsai"):
    for v in ("old", "new"):
        rs = [json.load(open(p)) for p in sorted(glob.glob(f"{R}/ab-{name}-{v}-*.json"))]
        print(name, v, " ".join(f"its={r['iterations']} solve={r['solve_s']:.4f} ms/it={1e3*r['iter_s']:.4f} setup={r['setup_s']:.3f} prec={r.get('prec_setup_s',0):.3f}" for r in rs))
PY
scripts/bench-afsai-gpu.sh $R/afsai > $R/bench-afsai.log 2>&1
scripts/bench-library.sh cuda poisson7:200 poisson7:100 $R/library > $R/bench-library.log 2>&1
(cd gpu && ../bin/gpu.test -test.run '^$' -test.bench 'FactorWidth|Bandwidth' -test.benchtime 50x -fsai.n 200 -gpu.n 200) > $R/bench-gpu.log 2>&1
