# The plots of bench/plot.sh, which sets: data (directory of the .dat files
# plotdata.awk wrote), out (directory for the PNGs), title, simulated and
# has_native (0/1), and n_FILE, the rows of each data file (a plot with no
# rows is not drawn: a run with --only measured part of the suite).
set terminal pngcairo size 1400,1000 font ",10" noenhanced
set datafile missing "NaN"
set grid
set key top left

# --- cudaMemcpy bandwidth against size, one panel per kind and direction ----
if (n_bw_pinned_h2d + n_bw_pinned_d2h + n_bw_pageable_h2d + n_bw_pageable_d2h > 0) {
    set output out."/bandwidth.png"
    set multiplot layout 2,2 title "cudaMemcpy bandwidth (GB/s, median)  ".title
    set logscale x 2
    set offsets graph 0.03, graph 0.03, 0, 0   # room for the first and last size labels
    set xlabel "copy size"
    set ylabel "GB/s"
    set xtics ("4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304, \
               "16M" 16777216, "64M" 67108864, "256M" 268435456, "1G" 1073741824)
    do for [kind in "pinned pageable"] {
        do for [dir in "h2d d2h"] {
            f = data."/bw-".kind."-".dir.".dat"
            set title kind." ".(dir eq "h2d" ? "host to device" : "device to host")
            if (value("n_bw_".kind."_".dir) == 0) {
                set label 1 "not measured" at graph 0.5, graph 0.5 center
                plot [1:2] [0:1] NaN notitle
                unset label 1
            } else {
                if (has_native) {
                    plot f using 1:2 with linespoints lw 2 title "native", \
                         f using 1:3 with linespoints lw 2 title "Tandem shm", \
                         f using 1:4 with linespoints lw 2 title "Tandem tcp"
                } else {
                    plot f using 1:3 with linespoints lw 2 title "Tandem shm", \
                         f using 1:4 with linespoints lw 2 title "Tandem tcp"
                }
            }
        }
    }
    unset multiplot
    unset logscale x
    set offsets 0, 0, 0, 0
    set xtics autofreq
    unset xlabel
}

# --- latencies: null calls, launches, create/destroy -------------------------
if (n_latency > 0) {
    set output out."/latency.png"
    set title "API call cost (median microseconds, log scale)  ".title
    set style data histograms
    set style histogram clustered gap 1
    set style fill solid 0.8 border -1
    set logscale y 10
    set ylabel "microseconds"
    set xtics rotate by -25 nomirror
    f = data."/latency.dat"
    if (has_native) {
        plot f using 2:xtic(1) title "native", '' using 3 title "Tandem shm", '' using 4 title "Tandem tcp"
    } else {
        plot f using 3:xtic(1) title "Tandem shm", '' using 4 title "Tandem tcp"
    }
    unset logscale y
    set xtics norotate
}

# --- applications ------------------------------------------------------------
if (n_apps > 0) {
    set output out."/apps.png"
    set style data histograms
    set style histogram clustered gap 1
    set style fill solid 0.8 border -1
    set yrange [0:*]
    f = data."/apps.dat"
    if (has_native) {
        set title "Application time relative to native (1.0 = native; targets 1.05 shm, 1.15 tcp)  ".title
        set ylabel "time / native time"
        set arrow 1 from graph 0, first 1.05 to graph 1, first 1.05 nohead dt 2 lw 2 lc rgb "#9400d3"
        set arrow 2 from graph 0, first 1.15 to graph 1, first 1.15 nohead dt 2 lw 2 lc rgb "#009e73"
        plot f using ($3/$2):xtic(1) title "Tandem shm", '' using ($4/$2) title "Tandem tcp"
    } else {
        set title "Application time (ms, median)  ".title
        set ylabel "milliseconds"
        plot f using 3:xtic(1) title "Tandem shm", '' using 4 title "Tandem tcp"
    }
}
