#!/usr/bin/env bash
# session 13, lease 11: G's entries left of the block listed by their rows (DeviceFactor.LeftRows); tests, A/B against 4619452, timing prints, solves on 1, 2 and 4 ranks
R=$OUT/run11; mkdir -p $R; trap 'cd $OUT && tar czf run11.tgz run11' EXIT
. scripts/env.sh
(cd gpu && ../bin/gpu.test -test.v -test.run 'AdaptiveFactor|AdaptiveSetup|StartRows|Fixed|KernelsCompile|Transpose|SpreadRows|FreeLater' > $R/gputest.log 2>&1); echo "gpu tests rc $?"
grep -c '^    --- PASS' $R/gputest.log; grep -E '^(--- FAIL|FAIL|ok|PASS)|FreeLater' $R/gputest.log | head -5; grep -B2 -A8 -- '--- FAIL' $R/gputest.log | head -40
(cd gpu && ../bin/gpu.test -test.run 'TestSpMV|TestVectorOps|TestDot|TestHalo|TestPeer' > $R/gputest2.log 2>&1); echo "gpu tests 2 rc $?"; tail -1 $R/gputest2.log
(cd pcg && ../bin/pcg.test -test.run OnGPU > $R/pcgtest.log 2>&1); echo "pcg tests rc $?"; tail -1 $R/pcgtest.log
P="-problem diffusion:200 -prec afsai"
bash bin/ab.sh $R d200np2 2 $P
bash bin/ab.sh $R d200np1 1 $P
for i in 1 2; do FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 -report $R/dbg2-$i.json > $R/dbg2-$i.log 2>&1; done
FSAI_DBG=1 mpirun -np 1 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 -report $R/dbg1.json > $R/dbg1.log 2>&1
for np in 1 2 4; do s=""; [ $np = 4 ] && s="-gpu.share"; mpirun -np $np --bind-to none --oversubscribe bin/fsai-dist -backend cuda $s $P -progress 0 -report $R/solve$np.json > $R/solve$np.log 2>&1; echo "solve$np rc $?"
python3 -c "import json;r=json.load(open('$R/solve$np.json'));p=r['prec_info'];print('solve$np', r['iterations'], r['relres'], 'prec', r['prec_setup_s'], 'solve', r['solve_s'], 'bind', r['bind_s'], 'early_rows', p.get('early_rows'))"; done
echo "== dbg2-2 r1"; grep 'DBG r1' $R/dbg2-2.log | grep -v 'step \|xr:\|NewVector' | sort -k3 -n | awk '/joinKept done/{p=1} p' | head -70
echo "== dbg1"; grep 'DBG r0' $R/dbg1.log | grep -v 'step \|xr:\|NewVector' | awk '/batch grown/{p=1} p' | head -40
for i in 1 2 3; do for np in 1 2; do
  mpirun -np $np --bind-to none bin/fsai-dist -backend cuda $P -maxit 1 -progress 0 -report $R/alt-np$np-$i.json > $R/alt-np$np-$i.log 2>&1
done; done
python3 - $R <<'PY'
import json,sys
R=sys.argv[1]
t={1:[],2:[]}
for np in (1,2):
  for i in (1,2,3):
    r=json.load(open(f'{R}/alt-np{np}-{i}.json')); p=r['prec_info']; t[np].append(r['prec_setup_s'])
    print(f"np{np} {i}: prec {r['prec_setup_s']:.4f} setup {r['setup_s']:.4f} compute {p['compute_s']:.4f} gather {p['gather_s']:.4f} transpose {p['transpose_s']:.4f} upload {p['upload_s']:.4f}")
import statistics as s
print("median np1 %.4f np2 %.4f ratio %.3f" % (s.median(t[1]), s.median(t[2]), s.median(t[2])/s.median(t[1])))
PY
