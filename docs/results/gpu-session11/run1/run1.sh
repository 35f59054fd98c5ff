#!/usr/bin/env bash
# session 11, lease 1: per-launch profile of the GPU aFSAI set-up (diffusion:200, one GPU)
R=$OUT/run1; mkdir -p $R; trap 'cd $OUT && tar czf run1.tgz run1' EXIT
. scripts/env.sh
which nsys ncu > $R/tools.txt 2>&1; ls /usr/local/cuda/bin >> $R/tools.txt 2>&1
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
echo "nsys=$NSYS ncu=$NCU"
bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -maxit 1 -progress 0 -report $R/warm.json > $R/warm.log 2>&1
if [ -n "$NSYS" ]; then
  timeout 200 $NSYS profile -t cuda -o $R/prof --force-overwrite true bin/fsai-dist -backend cuda -problem diffusion:200 -prec afsai -maxit 1 -progress 0 -report $R/prof.json > $R/nsys.log 2>&1
  timeout 100 $NSYS stats -r cuda_gpu_trace -f csv -o $R/trace $R/prof.nsys-rep >> $R/nsys.log 2>&1
  rm -f $R/prof.nsys-rep $R/prof.sqlite
  ls $R
fi
timeout 240 $NCU -k 'regex:fsai_(border|solve|kapgrad|sysgather)' --metrics gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \
  bin/fsai-dist -backend cuda -problem diffusion:100 -prec afsai -maxit 1 -progress 0 > $R/ncu.csv 2> $R/ncu.err
echo "ncu rc $? lines $(wc -l < $R/ncu.csv)"
