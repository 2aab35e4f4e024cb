# Functions every bench awk script shares (POSIX awk, mawk included):
# run as `awk -f common.awk -f SCRIPT.awk`.

# The value of "key" in one JSON object line (strings unquoted; escapes
# inside strings are skipped over, not decoded).
function jget(s, key,    re, v) {
    re = "\"" key "\":(\"([^\"\\\\]|\\\\.)*\"|[^,}]*)"
    if (!match(s, re))
        return ""
    v = substr(s, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
    gsub(/^"|"$/, "", v)
    return v
}

function fmt(v) {
    if (v == "")
        return "-"
    v += 0
    if (v < 10) return sprintf("%.3f", v)
    if (v < 1000) return sprintf("%.2f", v)
    return sprintf("%.0f", v)
}

# One table line for table.sh: its section, sort key and text.
function out(section, key, text) {
    printf "%d|%s|%s\n", section, key, text
}

# The median of v[1..n], sorted ascending.
function median(v, n) {
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}

# Sorts v[1..n] in place (insertion sort: a handful of samples).
function sort_n(v, n,    i, j, t) {
    for (i = 2; i <= n; i++) {
        t = v[i]
        for (j = i - 1; j >= 1 && v[j] + 0 > t + 0; j--)
            v[j + 1] = v[j]
        v[j + 1] = t
    }
}

# Counts a verdict.
function count(v) {
    if (v == "pass") npass++
    else if (v == "MISS") nmiss++
    else if (v == "n/a") nna++
}

# A line of bench/targets.tsv (the first input) into t_id, t_tr, t_test,
# t_lim, t_minb, t_text [1..ntargets]; comments and blank lines skipped.
function read_target() {
    if ($0 ~ /^[ \t]*(#|$)/)
        return
    ntargets++
    t_id[ntargets] = $1; t_tr[ntargets] = $2; t_test[ntargets] = $3
    t_lim[ntargets] = $4; t_minb[ntargets] = $5; t_text[ntargets] = $6
}
