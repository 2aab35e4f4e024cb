# The takeover suite's plots (bench/plot.sh, which sets: data (the directory
# of takeover-plotdata.awk's files), out (the PNGs' directory), title,
# simulated and has_native (0/1), target, pub_lo and pub_hi (ms; NaN when
# targets.tsv has none), n_recovery and n_overhead (rows of each file; a
# plot with no rows is not drawn: --only ran part of the suite) and
# n_recovery_buffers (the buffer sizes killed at)).
set terminal pngcairo size 1400,900 font ",10" noenhanced
set datafile missing "NaN"
set grid
set key top left

# --- recovery: every kill, per buffer size, on a log scale ------------------
# The published system's range as a band and the target as a line, so the
# points read against both.
if (n_recovery > 0) {
    set output out."/recovery.png"
    set title "Recovery: SIGKILL of the active server to the completion of the iteration that waited for the resume (ms)  ".title
    set logscale y 10
    set ylabel "milliseconds (log scale)"
    set xlabel "in-place buffer"
    set xrange [0.5:n_recovery_buffers + 0.5]
    f = data."/recovery.dat"
    m = data."/median.dat"
    # The band and the target stay in view whatever the points' range (the
    # guest-reported figures lie below the recoveries).
    stats f using 3 nooutput
    y_hi = STATS_max
    if (pub_hi == pub_hi && pub_hi > y_hi) { y_hi = pub_hi }
    if (target == target && target > y_hi) { y_hi = target }
    set yrange [STATS_min / 4 : y_hi * 2]
    if (pub_lo == pub_lo && pub_hi == pub_hi) {
        set object 1 rect from graph 0, first pub_lo to graph 1, first pub_hi fc rgb "#dddddd" fs solid 0.6 noborder behind
        set label 1 sprintf("published active/standby system: %g-%g ms", pub_lo, pub_hi) at graph 0.99, first pub_hi \
            right offset 0, 0.8
    }
    if (target == target) {
        plot m using 1:3:xtic(2) with points pt 5 ps 2 lc rgb "black" title "median recovery", \
             f using 1:3 with points pt 7 ps 1.2 title "recovery, each kill", \
             f using 1:4 with points pt 6 ps 1.2 title "guest-reported (detection to replay done)", \
             target with lines dt 2 lw 2 lc rgb "#d55e00" title sprintf("target <= %g ms", target)
    } else {
        plot m using 1:3:xtic(2) with points pt 5 ps 2 lc rgb "black" title "median recovery", \
             f using 1:3 with points pt 7 ps 1.2 title "recovery, each kill", \
             f using 1:4 with points pt 6 ps 1.2 title "guest-reported (detection to replay done)"
    }
    unset object 1
    unset label 1
    unset logscale y
    unset xlabel
    set xrange [*:*]
    set yrange [*:*]
}

# --- shadowing overhead: time with a standby relative to none, and to native
if (n_overhead > 0) {
    set output out."/shadowing.png"
    set style data histograms
    set style histogram clustered gap 1
    set style fill solid 0.8 border -1
    set yrange [0:*]
    set xtics rotate by -25 nomirror
    f = data."/overhead.dat"
    c_tcp = "#e69f00"; c_exact = "#9400d3"; c_replay = "#009e73"   # the same in both panels
    set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2 lc rgb "black"
    if (has_native) {
        set multiplot layout 2,1 title "Steady-state cost of a standby (no kill)  ".title
        set title "time relative to Tandem over tcp with no standby (1.0 = no standby)"
        set ylabel "time / no-standby time"
        plot f using 2:xtic(1) title "standby, exact" lc rgb c_exact, '' using 3 title "standby, replay" lc rgb c_replay
        set title "time relative to native (1.0 = native)"
        set ylabel "time / native time"
        plot f using 4:xtic(1) title "tcp, no standby" lc rgb c_tcp, '' using 5 title "standby, exact" lc rgb c_exact, \
             '' using 6 title "standby, replay" lc rgb c_replay
        unset multiplot
    } else {
        set title "Steady-state cost of a standby (no kill): time relative to Tandem over tcp with no standby  ".title
        set ylabel "time / no-standby time"
        plot f using 2:xtic(1) title "standby, exact" lc rgb c_exact, '' using 3 title "standby, replay" lc rgb c_replay
    }
}
