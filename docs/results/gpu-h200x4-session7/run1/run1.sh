#!/usr/bin/env bash
# session 7, lease 1 (nvidia-h200-x4): first-touch page faults; baseline set-up profile of poisson7:400 on 4 GPUs
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
export NCCL_NVLS_ENABLE=0
out=$(mktemp -d)
trap 'tar czf "$OUT/run1.tgz" -C "$out" .' EXIT
{
for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag /sys/kernel/mm/transparent_hugepage/khugepaged/defrag /sys/fs/cgroup/memory.max; do echo "$f: $(cat $f 2>&1)"; done
nproc; numactl -H 2>/dev/null | head -3; uname -r
echo "== one process, 16 threads"; bin/faultbench -mb 512 -threads 16 -reps 3
echo "== one process, 16 threads, huge"; bin/faultbench -mb 512 -threads 16 -reps 3 -huge
echo "== 4 processes, 16 threads"; for i in 1 2 3 4; do bin/faultbench -mb 512 -threads 16 -reps 3 & done; wait
echo "== 4 processes, 16 threads, huge"; for i in 1 2 3 4; do bin/faultbench -mb 512 -threads 16 -reps 3 -huge & done; wait
echo "== 4 processes, 64 threads"; for i in 1 2 3 4; do bin/faultbench -mb 512 -threads 64 -reps 3 & done; wait
} > $out/faults.txt 2>&1
cat $out/faults.txt
timeout 150 mpirun -np 4 --bind-to none bin/fsai-dist -backend cuda -problem poisson7:400 -prec afsai -progress 0 -report $out/p400-np4.json -cpuprofile $out/p400-np4.prof > $out/p400-np4.log 2>&1
echo "p400 rc $?"
timeout 60 mpirun -np 4 --bind-to none bin/fsai-dist -backend cuda -problem poisson7:192 -prec afsai -progress 0 -report $out/p192-np4.json -cpuprofile $out/p192-np4.prof > $out/p192-np4.log 2>&1
echo "p192 rc $?"
for f in $out/*.json; do python3 -c "
import json,sys; d=json.load(open('$f')); p=d['prec_info']
print('$f'.split('/')[-1], 'setup', round(d['setup_s'],3), 'read', round(d['read_s'],3), 'solve', round(d['solve_s'],3), d['iterations'], {k:round(v,3) for k,v in p.items() if k.endswith('_s')})"; done
