# bench/shares/shares-plot.sh's plot: out (the results folder) and title are given with -e.
set terminal pngcairo size 1500,450 font ",10"
set output out . "/shares.png"
set multiplot layout 1,3 title "SM shares, " . title
set title "(a) compute-bound throughput"
set xlabel "SMs"
set ylabel "GFLOP/s"
set key top left
set xtics (8, 16, 33, 66, 132)
plot out . "/logs/throughput.dat" using 1:2 with linespoints title "native, green context", \
     ""                            using 1:3 with linespoints title "Tandem, --session-sms"
set title "(b) resize 8 -> 66 SMs through Tandem"
set xlabel "kernel"
set ylabel "latency (ms)"
set y2label "SMs seen"
set y2tics
set xtics autofreq
set logscale y
plot out . "/logs/resize-1.dat" using 1:2 with lines title "1 stream", \
     out . "/logs/resize-16.dat" using 1:2 with lines title "16 streams", \
     out . "/logs/resize-64.dat" using 1:2 with lines title "64 streams", \
     out . "/logs/resize-64.dat" using 1:3 axes x1y2 with steps dt 2 title "SMs seen (64)"
unset logscale y
unset y2label
unset y2tics
set title "(c) Flyt Table 6: latency-critical matmul's variation"
set xlabel "best-effort applications"
set ylabel "coefficient of variation (%)"
set xtics 1
set style data histograms
set style fill solid 0.6
set boxwidth 0.9
plot out . "/logs/table6.dat" using 2:xtic(1) title "native, green contexts", \
     ""                       using 3 title "Tandem, 8 SMs each", \
     2 with lines dt 2 lc rgb "red" title "Flyt (2%)"
unset multiplot
