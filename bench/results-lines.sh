# Sourced by table.sh and plot.sh: prints a results.json as lines, the meta
# object first, then one measurement per line.  bench/run.sh writes the file
# that way already; a file reformatted since (jq . and the like) is read
# back through jq.
bench_result_lines() {
    local f=$1
    [ -r "$f" ] || { echo "no results file: $f" >&2; return 1; }
    if grep -q '^"meta": {' "$f"; then
        sed -n 's/^"meta": \({.*}\),$/\1/p' "$f"
        grep '^{"mode":' "$f" | sed 's/,$//'
    elif command -v jq >/dev/null 2>&1; then
        jq -c '.meta' "$f" && jq -c '.results[]' "$f"
    else
        echo "$f is not in bench/run.sh's line format and jq is not installed to read it" >&2
        return 1
    fi
}
