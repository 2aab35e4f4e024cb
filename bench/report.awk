# The benchmark table (bench/table.sh runs this; POSIX awk, mawk included).
# Input: the targets file, then the results as lines: the meta object first,
# then one measurement object per line (what bench/run.sh writes).
# Output: lines "SECTION|SORTKEY|TEXT" for table.sh to sort and cut.
# Exit status: 1 if a checksum differs from its reference or a measurement
# the run should have made is missing.

# The first target for (id, transport, bytes), or 0.
function target_for(id, tr, bytes,    i, pat, n, trs, k, ok) {
    for (i = 1; i <= ntargets; i++) {
        pat = t_id[i]
        if (pat ~ /\*$/) {
            pat = substr(pat, 1, length(pat) - 1)
            if (substr(id, 1, length(pat)) != pat) continue
        } else if (pat != id) continue
        n = split(t_tr[i], trs, ",")
        ok = 0
        for (k = 1; k <= n; k++) if (trs[k] == tr) ok = 1
        if (!ok) continue
        if (t_minb[i] != "-" && (bytes == "" || bytes + 0 < t_minb[i] + 0)) continue
        return i
    }
    return 0
}

# pass, MISS or n/a for target i against the value of id over tr.
function verdict(i, id, tr,    v, nat, r) {
    if (!i) return ""
    if ((id, tr) in value) v = value[id, tr] + 0
    else return "n/a"
    if (t_test[i] == "abs_max") return v <= t_lim[i] + 0 ? "pass" : "MISS"
    if (!((id, "native") in value) || value[id, "native"] + 0 <= 0) return "n/a"
    r = v / (value[id, "native"] + 0)
    if (t_test[i] == "ratio_max") return r <= t_lim[i] + 0 ? "pass" : "MISS"
    return r >= t_lim[i] + 0 ? "pass" : "MISS"
}

function ratio(id, tr) {
    if (!((id, tr) in value) || !((id, "native") in value) || value[id, "native"] + 0 <= 0)
        return "-"
    return sprintf("%.2fx", value[id, tr] / value[id, "native"])
}

function target_text(a, b,    s) {
    if (a && a == b) s = t_text[a]
    else if (a && b) s = "shm " t_text[a] ", tcp " t_text[b]
    else if (a) s = "shm " t_text[a]
    else if (b) s = "tcp " t_text[b]
    else s = ""
    gsub(/_/, " ", s)
    return s
}

# Rows sort by group, then (for copies) kind, direction and size.
function sortkey(id,    g, k, d) {
    g = id ~ /^null\./ ? 1 : id ~ /^launch\./ ? 2 : id ~ /^create\./ ? 3 : id ~ /^memcpy\./ ? 4 : id ~ /^drv\./ ? 5 : 6
    k = id ~ /\.pageable\./ ? 1 : 0
    d = id ~ /\.d2h\./ ? 1 : 0
    return sprintf("%d%d%d%015d%06d", g, k, d, bytes_of[id] + 0, order[id])
}

FNR == NR {
    read_target()
    next
}

!have_meta {
    have_meta = 1
    simulated = jget($0, "simulated") == "true"
    label = jget($0, "label")
    device = jget($0, "device")
    nmodes = split(jget($0, "modes"), modes, " ")
    nbench = split(jget($0, "benchmarks"), benchmarks, " ")
    next
}

{
    id = jget($0, "id"); mode = jget($0, "mode")
    if (id == "" || mode == "") next
    if (!(id in order)) { order[id] = ++nids; ids[nids] = id }
    unit[id] = jget($0, "unit")
    if (jget($0, "bytes") != "") bytes_of[id] = jget($0, "bytes")
    value[id, mode] = jget($0, "value")
    p99[id, mode] = jget($0, "p99_us")
    csum[id, mode] = jget($0, "checksum")
    size[id, mode] = jget($0, "size") (jget($0, "iters") + 0 > 0 ? "x" jget($0, "iters") : "")
}

END {
    if (!have_meta) { print "0||no results"; exit 1 }
    fail = 0
    if (simulated) out(0, "", label)
    out(0, "", "device: " device)
    out(1, "", sprintf("%-28s %-5s %10s %10s %10s %8s %8s  %-30s %-5s %-5s", "measurement", "unit", \
        "native", "shm", "tcp", "shm/nat", "tcp/nat", "target", "shm", "tcp"))
    # Every benchmark the run meant to make must have left a measurement.
    for (k = 1; k <= nbench; k++) {
        prefix = benchmarks[k] ~ /^(null|launch|create|memcpy)$/ ? benchmarks[k] "." : \
            benchmarks[k] == "driver-calls" ? "drv." : "app." benchmarks[k]
        found = 0
        for (n = 1; n <= nids; n++)
            if (ids[n] == prefix || (prefix ~ /\.$/ && index(ids[n], prefix) == 1)) found = 1
        if (!found) {
            out(8, sprintf("%06d", k), "MISSING: no result at all from " benchmarks[k])
            fail = 1
        }
    }
    for (n = 1; n <= nids; n++) {
        id = ids[n]
        # Every mode of the run must have produced every measurement.
        for (m = 1; m <= nmodes; m++)
            if (modes[m] != "host" && !((id, modes[m]) in value)) {
                out(8, sprintf("%06d", n), "MISSING: " id " over " modes[m])
                fail = 1
            }
        a = target_for(id, "shm", bytes_of[id]); b = target_for(id, "tcp", bytes_of[id])
        vs = verdict(a, id, "shm"); vt = verdict(b, id, "tcp")
        count(vs); count(vt)
        shown = id
        if ((id, "native") in size) shown = id " " size[id, "native"]
        else if ((id, "shm") in size) shown = id " " size[id, "shm"]
        out(2, sortkey(id), sprintf("%-28s %-5s %10s %10s %10s %8s %8s  %-30s %-5s %-5s", shown, unit[id], \
            fmt(value[id, "native"]), fmt(value[id, "shm"]), fmt(value[id, "tcp"]), ratio(id, "shm"), \
            ratio(id, "tcp"), target_text(a, b), vs, vt))
        if (unit[id] == "us" && (p99[id, "shm"] != "" || p99[id, "native"] != "") && ++np99)
            out(4, sortkey(id), sprintf("%-28s %10s %10s %10s", id, fmt(p99[id, "native"]), fmt(p99[id, "shm"]), \
                fmt(p99[id, "tcp"])))
        if (id !~ /^app\./) continue
        napps++
        # Checksums: every Tandem run against the native run (GPU) or the
        # host reference (sim); on the GPU also the host reference against
        # the native run at the small check size.
        ref = ((id, "native") in csum) ? "native" : "host"
        if (!((id, ref) in csum)) {
            out(6, sortkey(id), sprintf("%-20s no %s checksum to compare with", id, ref))
            fail = 1
            continue
        }
        line = sprintf("%-20s %-12s %-8s %-18s", id, size[id, ref], ref, csum[id, ref])
        for (m = 1; m <= nmodes; m++) {
            tr = modes[m]
            if (tr == ref || tr == "host" || tr == "native") continue
            if (!((id, tr) in csum)) { line = line sprintf("  %s missing", tr); fail = 1 }
            else if (csum[id, tr] == csum[id, ref]) line = line sprintf("  %s = %s", tr, ref)
            else { line = line sprintf("  %s MISMATCH %s", tr, csum[id, tr]); fail = 1 }
        }
        out(6, sortkey(id), line)
        if ((id, "native_check") in csum) {
            c = csum[id, "native_check"] == csum[id, "host_check"]
            out(6, sortkey(id) "x", sprintf("%-20s %-12s %-8s %-18s  host reference %s", id, size[id, "native_check"], \
                "native", csum[id, "native_check"], c ? "= native" : "MISMATCH " csum[id, "host_check"]))
            if (!c) fail = 1
        }
    }
    if (np99) {
        out(3, "", "")
        out(3, "", sprintf("%-28s %10s %10s %10s   (p99 of single calls, microseconds)", "p99", "native", "shm", "tcp"))
    }
    if (napps) {
        out(5, "", "")
        out(5, "", sprintf("%-20s %-12s %-8s %-18s  %s", "checksums", "size", "ref", "checksum", "Tandem runs"))
    }
    out(7, "", "")
    out(7, "", sprintf("targets: %d pass, %d miss, %d not applicable%s", npass, nmiss, nna, \
        simulated ? " (" label ")" : ""))
    out(7, "", fail ? "checksums or measurements: FAILED (above)" : "checksums: all match; no measurement missing")
    exit fail
}
