# Splits benchmark results (the lines of bench/results-lines.sh) into the
# data files bench/plot.sh draws from, in directory `dir`:
#   bw-KIND-DIR.dat  bytes  native shm tcp     (GB/s; NaN where not run)
#   latency.dat      label  native shm tcp     (median microseconds)
#   apps.dat         app    native shm tcp     (median milliseconds)
#   meta.txt         title line, simulated (0/1), has_native (0/1)
# POSIX awk (mawk included).

function cell(id, m) {
    return ((id, m) in value) ? value[id, m] : "NaN"
}

function row(f, label, id) {
    printf "%s %s %s %s\n", label, cell(id, "native"), cell(id, "shm"), cell(id, "tcp") > f
}

NR == 1 {
    simulated = jget($0, "simulated") == "true"
    title = jget($0, "device") "  " jget($0, "date")
    if (simulated) title = jget($0, "label") "  (" jget($0, "device") ")"
    next
}

{
    id = jget($0, "id"); mode = jget($0, "mode")
    if (id == "" || (mode != "native" && mode != "shm" && mode != "tcp")) next
    if (!(id in seen)) { seen[id] = 1; ids[++n] = id }
    value[id, mode] = jget($0, "value")
    bytes[id] = jget($0, "bytes")
    if (mode == "native") has_native = 1
}

END {
    split("pinned pageable", kinds, " ")
    split("h2d d2h", dirs, " ")
    for (k = 1; k <= 2; k++)
        for (d = 1; d <= 2; d++) {
            f = dir "/bw-" kinds[k] "-" dirs[d] ".dat"
            printf "# bytes native shm tcp (GB/s)\n" > f
            for (i = 1; i <= n; i++)
                if (index(ids[i], "memcpy." kinds[k] "." dirs[d] ".") == 1)
                    row(f, bytes[ids[i]], ids[i])
            close(f)
        }
    f = dir "/latency.dat"
    printf "# measurement native shm tcp (median us)\n" > f
    for (i = 1; i <= n; i++)
        if (ids[i] ~ /^(null|launch|create)\./)
            row(f, ids[i], ids[i])
    close(f)
    f = dir "/apps.dat"
    printf "# app native shm tcp (median ms)\n" > f
    for (i = 1; i <= n; i++)
        if (ids[i] ~ /^app\./)
            row(f, substr(ids[i], 5), ids[i])
    close(f)
    printf "%s\n%d\n%d\n", title, simulated, has_native > (dir "/meta.txt")
}
