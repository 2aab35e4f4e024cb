# bench/tcp-shapes.awk: the medians of bench/tcp-shapes.sh's rounds (run
# with common.awk).
#   mode=table: input "shape id bytes GB/s", sorted by bytes, id, shape and
#     value; prints the table (cols: its columns' shapes, title).
#   mode=curve: input "bytes GB/s" of one shape, sorted; prints "bytes
#     median" per size (the plot's data).

mode == "curve" {
    if ($1 != cb && cb != "") { print cb, median(cv, cn); cn = 0 }
    cb = $1; cv[++cn] = $2
    next
}

# One (shape, id)'s values are in v[1..cnt]: its median and range.
function flush() {
    if (key == "") return
    med[key] = median(v, cnt)
    lo[key] = v[1]; hi[key] = v[cnt]; cnt = 0
}

mode == "table" {
    k = $1 SUBSEP $2; if (k != key) { flush(); key = k }; v[++cnt] = $4
    if (!($2 in seen)) { seen[$2] = 1; ids[++nid] = $2; bytes[$2] = $3 }
}

END {
    if (mode == "curve") {
        if (cn) print cb, median(cv, cn)
        exit
    }
    flush()
    n = split(cols, c, " ")
    printf "tcp copies by shape, GB/s: median of the rounds (min-max), x native median; %s\n", title
    printf "%-26s", "copy"
    for (i = 1; i <= n; i++) printf "%26s", c[i]
    printf "\n"
    # pinned first, then pageable; within each, h2d then d2h by size
    for (pass = 1; pass <= 4; pass++)
        for (s = 1; s <= nid; s++) {
            id = ids[s]
            want = (pass == 1) ? "pinned.h2d" : (pass == 2) ? "pinned.d2h" : (pass == 3) ? "pageable.h2d" : "pageable.d2h"
            if (index(id, want) == 0) continue
            printf "%-26s", id
            nat = ("native" SUBSEP id) in med ? med["native" SUBSEP id] : 0
            for (i = 1; i <= n; i++) {
                k = c[i] SUBSEP id
                if (!(k in med)) { printf "%26s", "-"; continue }
                cell = sprintf("%.2f (%.1f-%.1f)", med[k], lo[k], hi[k])
                if (nat > 0 && c[i] != "native") cell = cell sprintf(" %.2fx", med[k] / nat)
                printf "%26s", cell
            }
            printf "\n"
        }
}
