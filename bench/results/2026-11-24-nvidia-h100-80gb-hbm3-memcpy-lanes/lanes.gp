# gnuplot lanes.gp: TCP bulk copies against the number of lanes (H100 host, loopback).
set terminal pngcairo size 900,560 noenhanced
set output 'lanes.png'
set title "cudaMemcpy of 256 MiB, pinned, over TCP loopback, by lanes\nNVIDIA H100 80GB HBM3, driver 580.159.04, 2026-11-24"
set xlabel "TANDEM_TCP_LANES (connections striping one copy)"
set ylabel "GB/s"
set logscale x 2
set xrange [3.5:18]
set xtics (4, 8, 16)
set yrange [0:60]
set key at graph 0.98, graph 0.8 right
set grid ytics
plot 'lanes.dat' using 1:2 with linespoints title 'native H2D', \
     '' using 1:3 with linespoints title 'Tandem tcp H2D', \
     '' using 1:5 with linespoints title 'Tandem tcp D2H', \
     '' using 1:6 with linespoints dashtype 2 title 'bare TCP loopback, that many connections', \
     '' using 1:($2/3) with lines dashtype 3 linewidth 2 title 'a third of native H2D (the issue''s bar)'
