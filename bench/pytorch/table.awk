# bench/pytorch/table.awk: bench/pytorch/run.sh's table from results.tsv (round, mode, model,
# dtype, images/s, checksum, status; a file from before --rounds has no round column: one round).
#   awk -F'\t' -f table.awk results.tsv              table.txt's rows after its two header lines
#   awk -F'\t' -v what=ratios -f table.awk results.tsv   ratios.dat for the plot: config, shm/native, tcp/native
# Per model and dtype: the median images/s of native, shm and tcp over the rounds that ran, the
# ratios of those medians, and each mode's min-max.  Single runs vary too much (native up to
# 1.6x between runs on the H100) for one ratio to mean anything.  checksum: "equal" when every
# shm and tcp run's checksum is its round's native one, else DIFFER (run.sh then fails).
BEGIN {
    nmodes = split("native shm tcp", modes, " ")
    flyt["resnet50"] = "300 / 20.0 / 2.0"; flyt["vgg16"] = "296 / 55.0 / 5.2"
    flyt["efficientnet_b0"] = "305 / 19.7 / 1.7"; flyt["densenet121"] = "308 / 8.1 / 0.9"
}
NR == 1 { shift = ($1 == "round") ? 1 : 0; next }
{
    r = shift ? $1 : 1; mode = $(1 + shift); k = $(2 + shift) " " $(3 + shift)
    ips = $(4 + shift); sum = $(5 + shift)
    if (!(k in seen)) { seen[k] = 1; order[++n] = k }
    if (ips != "-" && ips + 0 > 0) { v[mode, k, ++cnt[mode, k]] = ips + 0 }
    sums[mode, k, r] = sum; rounds[k, r] = 1
}
# The median of mode's figures for k ("" when none ran): sorted in place (a handful of rounds).
function median(mode, k,    m, i, j, t) {
    m = cnt[mode, k] + 0
    if (m == 0) return ""
    for (i = 2; i <= m; i++)
        for (j = i; j > 1 && v[mode, k, j - 1] > v[mode, k, j]; j--) {
            t = v[mode, k, j]; v[mode, k, j] = v[mode, k, j - 1]; v[mode, k, j - 1] = t
        }
    return m % 2 ? v[mode, k, (m + 1) / 2] : (v[mode, k, m / 2] + v[mode, k, m / 2 + 1]) / 2
}
function range(mode, k,    m) {
    m = cnt[mode, k] + 0
    return m == 0 ? "-" : sprintf("%.1f-%.1f", v[mode, k, 1], v[mode, k, m])
}
function ratio(a, b) { return (a != "" && b != "" && b > 0) ? sprintf("%.2fx", a / b) : "-" }
function fig(a) { return a == "" ? "-" : sprintf("%.1f", a) }
END {
    if (what != "ratios")
        printf "%-16s %-5s %9s %9s %7s %9s %7s  %-8s %-15s %-15s %-15s %s\n", "model", "dtype", "native", "shm",
               "ratio", "tcp", "ratio", "checksum", "native min-max", "shm min-max", "tcp min-max", "Flyt n/shm/tcp"
    for (i = 1; i <= n; i++) {
        k = order[i]; split(k, f, " ")
        nat = median("native", k); s = median("shm", k); t = median("tcp", k)
        if (what == "ratios") {
            printf "%s-%s %s %s\n", f[1], f[2], (nat != "" && s != "") ? s / nat : 0, (nat != "" && t != "") ? t / nat : 0
            continue
        }
        same = "equal"
        for (key in rounds) {
            split(key, kr, SUBSEP)
            # A mode with no checksum in that round (it failed, or did not run: a run cut at its
            # time limit) is not a differing one; its row shows "-" instead of a figure.
            if (kr[1] == k && ((("shm", k, kr[2]) in sums && sums["shm", k, kr[2]] != sums["native", k, kr[2]]) ||
                               (("tcp", k, kr[2]) in sums && sums["tcp", k, kr[2]] != sums["native", k, kr[2]])))
                same = "DIFFER"
        }
        printf "%-16s %-5s %9s %9s %7s %9s %7s  %-8s %-15s %-15s %-15s %s\n", f[1], f[2], fig(nat), fig(s),
               ratio(s, nat), fig(t), ratio(t, nat), same, range("native", k), range("shm", k), range("tcp", k),
               (f[2] == "fp32" ? flyt[f[1]] : "")
    }
}
