# bench/tcp-shapes.gp: pinned cudaMemcpy GB/s over tcp against size, a line
# per shape, and a third of native (issue 14's bar) when native ran.
# Variables: dir (the .dat files: DIR-SHAPE.dat, "bytes GB/s"), out, shapes
# (space-separated, native first when it ran), native (1/0), title.
set terminal pngcairo size 1200,480 font ",10"
set output out
set multiplot layout 1,2 title "tcp copies by shape of the lanes, ".title
set logscale x 2
set xlabel "copy size"
set format x "%.0b%BB"
set ylabel "GB/s (median of the rounds)"
set key top left
set grid
do for [d in "h2d d2h"] {
  set title "pinned ".d
  if (native) {
    plot for [s in shapes] dir."/".d."-".s.".dat" using 1:2 with linespoints title s, \
         dir."/".d."-native.dat" using 1:($2 / 3) with lines dashtype 2 lc rgb "black" title "native / 3"
  } else {
    plot for [s in shapes] dir."/".d."-".s.".dat" using 1:2 with linespoints title s
  }
}
unset multiplot
