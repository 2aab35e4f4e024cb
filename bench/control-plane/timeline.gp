# bench/control-plane/timeline-plot.sh's plot; out, apps (names, space-separated), napps and sim
# are given with -e.
set terminal pngcairo size 1250,820 font ",10" noenhanced
set output out . "/timeline.png"
set datafile separator "\t"
set multiplot layout 2,1 title "Flyt's Table 7 in miniature: SM shares steered by the orchestrator" . (sim ? " (SIMULATED GPU)" : "")
set lmargin 10
set rmargin 26
set key outside right top
set xlabel "time (s)"
set xrange [0:*]
set grid ytics
set title "GPU 1: each application's SM share (stacked), the SMs placed, and the decisions"
set ylabel "SMs"
set yrange [0:150]
set style fill solid 0.5 noborder
m = out . "/plot/marks.tsv"
plot for [i=napps:1:-1] out . "/timeline.tsv" using 1:(sum [j=6:5+i] column(j)) skip 1 with filledcurves x1 title word(apps, i), \
     out . "/timeline.tsv" using 1:2 skip 1 with steps lw 2 lc rgb "black" title "GPU 1 placed", \
     out . "/timeline.tsv" using 1:3 skip 1 with lines dt 2 lc rgb "black" title "GPU 1 SMs", \
     out . "/timeline.tsv" using 1:4 skip 1 with steps lw 1 lc rgb "gray40" title "GPU 2 placed", \
     m using 1:(strcol(2) eq "place" ? 140 : NaN) with points pt 9 ps 1.3 lc rgb "dark-green" title "App ++", \
     m using 1:(strcol(2) eq "release" ? 140 : NaN) with points pt 11 ps 1.3 lc rgb "dark-red" title "App --", \
     m using 1:(strcol(2) eq "scale-up" ? 145 : NaN) with points pt 8 ps 1 lc rgb "blue" title "Vertical ++", \
     m using 1:(strcol(2) eq "scale-down" ? 145 : NaN) with points pt 10 ps 1 lc rgb "orange" title "Vertical --", \
     m using 1:(strcol(2) eq "migrate" ? 135 : NaN) with points pt 5 ps 1 lc rgb "magenta" title "Migrate (decided)", \
     m using 1:(strcol(2) eq "hold" ? 135 : NaN) with points pt 4 ps 1 lc rgb "gray50" title "hold"
set title "Each application's kernel latency (mean per 0.5 s, measured by the application)"
set ylabel "ms"
set logscale y
set yrange [*:*]
plot for [i=1:napps] out . "/plot/" . word(apps, i) . ".tsv" using 1:3 with lines lw 1.5 title word(apps, i), \
     3 with lines dt 2 lc rgb "red" title "APP_LATENCY_UPPER", \
     1 with lines dt 2 lc rgb "dark-green" title "APP_LATENCY_LOWER"
unset multiplot
