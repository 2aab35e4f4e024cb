# gnuplot ab.gp (in this folder): every run's median of each measurement,
# old build (2ab71d3) against new (47476b3), shm and tcp side by side.
set terminal pngcairo size 1400,800 font ",11"
set output "ab.png"
set title "Before and after the restructuring: 12 interleaved runs each on one H100 (median of each run; lower is better)"
set ylabel "microseconds (log scale)"
set logscale y
set grid ytics
set key top left
set xtics rotate by -25
ms = "null.cudaStreamQuery null.cudaEventQuery null.cudaDeviceSynchronize launch.issue launch.drained"
modes = "shm tcp"
idx(m, mode) = (sum [i=1:words(ms)] (word(ms, i) eq m ? i : 0)) * 3 + (mode eq "tcp" ? 1 : 0)
set xtics ()
do for [i=1:words(ms)] { do for [j=1:2] { set xtics add (word(ms, i)." ".word(modes, j) i*3 + j - 1) } }
set xrange [2:18]
plot "runs.dat" using (m=strcol(1), n=strstrt(m, ".shm") ? ".shm" : (strstrt(m, ".tcp") ? ".tcp" : ""), \
        (n eq "" || strcol(2) ne "old") ? NaN : idx(substr(m, 1, strlen(m) - 4), substr(n, 2, 4)) - 0.15):3 \
        with points pt 7 ps 1.2 lc rgb "#999999" title "before (2ab71d3)", \
     "runs.dat" using (m=strcol(1), n=strstrt(m, ".shm") ? ".shm" : (strstrt(m, ".tcp") ? ".tcp" : ""), \
        (n eq "" || strcol(2) ne "new") ? NaN : idx(substr(m, 1, strlen(m) - 4), substr(n, 2, 4)) + 0.15):3 \
        with points pt 5 ps 1.0 lc rgb "#2a9d8f" title "after (47476b3)"
