#!/usr/bin/env bash
# session 13, lease 2: page faults per stage (timing prints with minflt), first-touch cost
R=$OUT/run2; mkdir -p $R; trap 'cd $OUT && tar czf run2.tgz run2' EXIT
. scripts/env.sh
for f in enabled defrag; do echo "thp $f: $(cat /sys/kernel/mm/transparent_hugepage/$f)"; done > $R/thp.txt
grep -i 'memtotal\|hugepages' /proc/meminfo >> $R/thp.txt
bin/faultbench > $R/faultbench.txt 2>&1
bin/faultbench >> $R/faultbench.txt 2>&1
P="-problem diffusion:200 -prec afsai"
for i in 1 2; do FSAI_DBG=1 mpirun -np 2 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 -report $R/np2-$i.json > $R/np2-$i.log 2>&1; done
FSAI_DBG=1 mpirun -np 1 --bind-to none -x FSAI_DBG bin/fsai-dbg -backend cuda $P -maxit 1 -progress 0 -report $R/np1.json > $R/np1.log 2>&1
cat $R/thp.txt $R/faultbench.txt
grep 'DBG r1' $R/np2-2.log | grep -v step | sort -k3 -n | awk '/gather start/{p=1} p' | head -90
