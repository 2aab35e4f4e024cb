# bench/shares/shares-plot.sh's plot: out (the results folder), title and have_a, have_b, have_c
# (1 where that step has data) are given with -e.  Only the steps that were run get a panel.
if (!exists("have_a")) have_a = 1
if (!exists("have_b")) have_b = 1
if (!exists("have_c")) have_c = 1
panels = have_a + have_b + have_c
if (panels == 0) panels = 1
set terminal pngcairo size 500 * panels + 100,450 font ",10"
set output out . "/shares.png"
set multiplot layout 1,panels title "SM shares, " . title
set key top left
if (have_a) {
  set title "(a) compute-bound throughput"
  set xlabel "SMs"
  set ylabel "GFLOP/s"
  set xtics (8, 16, 33, 66, 132)
  plot out . "/logs/throughput.dat" using 1:2 with linespoints title "native, green context", \
       ""                            using 1:3 with linespoints title "Tandem, --session-sms"
}
set xtics autofreq
if (have_b) {
  set title "(b) resize 8 -> 66 SMs through Tandem"
  set xlabel "kernel"
  set ylabel "latency (ms)"
  set y2label "SMs seen"
  set y2tics
  set logscale y
  plot out . "/logs/resize-1.dat" using 1:2 with lines title "1 stream", \
       out . "/logs/resize-16.dat" using 1:2 with lines title "16 streams", \
       out . "/logs/resize-64.dat" using 1:2 with lines title "64 streams", \
       out . "/logs/resize-64.dat" using 1:3 axes x1y2 with steps dt 2 title "SMs seen (64)"
  unset logscale y
  unset y2label
  unset y2tics
}
if (have_c) {
  set title "(c) Flyt Table 6: C-App matmul latency beside G-Apps (mean, sd)"
  set xlabel "best-effort G-Apps"
  set ylabel "latency per call (ms)"
  set xtics 1
  set xrange [-0.5:4.5]
  # Autoscaled, not from 0: what Table 6 asks is how little the C-App's latency moves.
  set yrange [*:*]
  set key outside bottom center horizontal
  plot out . "/logs/table6.dat" using ($1-0.05):2:3 with yerrorlines title "C-App, native (green contexts)", \
       ""                       using ($1+0.05):4:5 with yerrorlines title "C-App, Tandem (--session-sms 8)", \
       ""                       using 1:6 with linespoints dt 2 title "G-Apps, native", \
       ""                       using 1:7 with linespoints dt 2 title "G-Apps, Tandem"
}
unset multiplot
