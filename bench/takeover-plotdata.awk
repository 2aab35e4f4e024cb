# Splits the takeover suite's results (the lines of bench/results-lines.sh)
# into the data files bench/plot.sh draws from, in directory `dir`:
#   recovery.dat   x label recovery_ms guest_ms   one line per kill; x is the
#                  buffer's position, spread a little per kill so the points
#                  do not hide each other
#   median.dat     x label median_recovery_ms     one line per buffer
#   overhead.dat   workload exact/tcp replay/tcp tcp/native exact/native
#                  replay/native                  (NaN where not run)
#   meta.txt       title line, simulated (0/1), has_native (0/1), the
#                  target in ms, the published range's low and high in ms
# POSIX awk (mawk included).  The first file is bench/targets.tsv.

function ratio(a, b) {
    return a == "" || b == "" || b + 0 <= 0 ? "NaN" : a / b
}

FNR == NR {
    # The target and the published range, from their text (..._31-80_ms).
    if ($1 == "recovery.*" && $2 == "exact" && $3 == "abs_max") target = $4
    if ($1 == "recovery.*" && $2 == "published" && match($6, /[0-9.]+-[0-9.]+_ms/)) {
        split(substr($6, RSTART, RLENGTH - 3), r, "-")
        pub_lo = r[1]; pub_hi = r[2]
    }
    next
}

!have_meta {
    have_meta = 1
    simulated = jget($0, "simulated") == "true"
    title = jget($0, "device") "  " jget($0, "date")
    if (simulated) title = jget($0, "label") "  (" jget($0, "device") ")"
    next
}

{
    id = jget($0, "id"); mode = jget($0, "mode")
    if (id ~ /^recovery\./ && mode == "exact") {
        if (!(id in pos)) { pos[id] = ++nbuf; bufs[nbuf] = id }
        n = ++nrec[id]
        rec[id, n] = jget($0, "value"); guest[id, n] = jget($0, "guest_ms")
        next
    }
    if (id !~ /^(loop|app)\./ || mode !~ /^(native|tcp|exact|replay)$/) next
    if (!(id in seen)) { seen[id] = 1; ids[++nids] = id }
    value[id, mode] = jget($0, "value")
    if (mode == "native") has_native = 1
}

END {
    f = dir "/recovery.dat"
    printf "# x buffer recovery_ms guest_ms\n" > f
    m = dir "/median.dat"
    printf "# x buffer median_recovery_ms\n" > m
    for (b = 1; b <= nbuf; b++) {
        id = bufs[b]; n = nrec[id]
        for (k = 1; k <= n; k++) {
            printf "%.3f %s %s %s\n", b + (k - (n + 1) / 2) * 0.3 / n, substr(id, 10), rec[id, k], \
                guest[id, k] == "" ? "NaN" : guest[id, k] > f
            v[k] = rec[id, k]
        }
        sort_n(v, n)
        printf "%d %s %s\n", b, substr(id, 10), n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 > m
    }
    close(f); close(m)
    f = dir "/overhead.dat"
    printf "# workload exact/tcp replay/tcp tcp/native exact/native replay/native\n" > f
    for (i = 1; i <= nids; i++) {
        id = ids[i]
        label = id
        sub(/^app\./, "", label)
        sub(/^loop\./, "loop-", label)
        printf "%s %s %s %s %s %s\n", label, ratio(value[id, "exact"], value[id, "tcp"]), \
            ratio(value[id, "replay"], value[id, "tcp"]), ratio(value[id, "tcp"], value[id, "native"]), \
            ratio(value[id, "exact"], value[id, "native"]), ratio(value[id, "replay"], value[id, "native"]) > f
    }
    close(f)
    printf "%s\n%d\n%d\n%s\n%s\n%s\n", title, simulated, has_native, target == "" ? "NaN" : target, \
        pub_lo == "" ? "NaN" : pub_lo, pub_hi == "" ? "NaN" : pub_hi > (dir "/meta.txt")
}
