# bench/fairness.sh's plot: the victim's p99 (us, log scale) per attack, native and Tandem over
# shm and tcp side by side, one panel per call.  Set by the script: out (the results directory:
# logs/ID.dat holds "attack native shm tcp" rows), title.
set terminal pngcairo size 1200,500 font ",10" noenhanced
set output out."/fairness.png"
set datafile missing "NaN"
set multiplot layout 1,2 title "Fair share: the victim's p99 alone and beside a process flooding launches  ".title
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y 10
set ylabel "p99, microseconds (log scale)"
set grid ytics
set key top left
set title "tiny kernel + cudaStreamSynchronize"
plot out."/logs/launch_sync.dat" using 2:xtic(1) title "native", '' using 3 title "Tandem shm", '' using 4 title "Tandem tcp"
set title "cudaMemcpy 4 KiB device to host"
plot out."/logs/d2h_4k.dat" using 2:xtic(1) title "native", '' using 3 title "Tandem shm", '' using 4 title "Tandem tcp"
unset multiplot
