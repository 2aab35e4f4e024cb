# The takeover suite's table (bench/table.sh runs this for a results.json
# whose meta says "suite":"takeover"; POSIX awk, mawk included).
# Input: the targets file, then the results as lines: the meta object, then
# one measurement per line (bench/takeover.sh).
# Output: lines "SECTION|SORTKEY|TEXT" for table.sh to sort and cut.
# Exit status 1 when a kill did not recover, a checksum differs from the
# reference, the no-standby baseline did not lose its session, or a
# measurement the run should have made is missing.

function ratio(a, b) {
    return a == "" || b == "" || b + 0 <= 0 ? "-" : sprintf("%.2fx", a / b)
}

# The label inplace gives a buffer of m MiB (bench_size_label).
function size_label(m) {
    return m % 1024 == 0 ? (m / 1024) "G" : m "M"
}

# Nearest rank, as bench/common/stats.c: the smallest sample with at least
# p% of the samples at or below it.
function pct(v, n, p,    r) {
    r = int(p / 100 * n + 0.999999)
    if (r < 1) r = 1
    if (r > n) r = n
    return v[r]
}

# The first target line for id over transport tr, or 0.
function target_for(id, tr,    i, pat) {
    for (i = 1; i <= ntargets; i++) {
        if (t_tr[i] != tr) continue
        pat = t_id[i]
        if (pat ~ /\*$/) {
            pat = substr(pat, 1, length(pat) - 1)
            if (substr(id, 1, length(pat)) != pat) continue
        } else if (pat != id) continue
        return i
    }
    return 0
}

function text_of(i,    s) {
    s = t_text[i]
    gsub(/_/, " ", s)
    return s
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
    ref = jget($0, "reference")
    kills = jget($0, "kills") + 0
    nbuf = split(jget($0, "buffers"), buffers, " ")
    nbench = split(jget($0, "benchmarks"), benchmarks, " ")
    next
}

{
    id = jget($0, "id"); mode = jget($0, "mode")
    if (id == "" || mode == "") next
    if (id ~ /^recovery\./ && mode == "exact") {
        n = ++nrec[id]
        rec[id, n] = jget($0, "value"); guest[id, n] = jget($0, "guest_ms")
        iter_exact[id, n] = jget($0, "iter_us"); rec_csum[id, n] = jget($0, "checksum")
        restored[id, n] = jget($0, "restored")
        next
    }
    if (id ~ /^recovery\./ && mode == "none") {
        lost[id] = jget($0, "outcome"); lost_err[id] = jget($0, "error")
        next
    }
    if (id ~ /^mem\./) {
        mem[id, mode] = jget($0, "value")
        if (!(id in mem_seen)) { mem_seen[id] = 1; mem_ids[++nmem] = id }
        next
    }
    if (!(id in order)) {
        order[id] = ++nids; ids[nids] = id
        bytes_of[id] = jget($0, "bytes")
    }
    unit[id] = jget($0, "unit")
    value[id, mode] = jget($0, "value")
    csum[id, mode] = jget($0, "checksum")
    if (id ~ /^app\./)
        shown[id] = id " " jget($0, "size") (jget($0, "iters") + 0 > 0 ? "x" jget($0, "iters") : "")
    else
        shown[id] = id " x" jget($0, "iters")
}

# Overhead rows: the loops by buffer size, then the applications.
function sortkey(id) {
    return sprintf("%d%015d%04d", id ~ /^loop\./ ? 1 : 2, bytes_of[id] + 0, order[id])
}

function recovery_rows(    b, id, n, i, v, g, it, t, verdict, nat, r, line, bad, nrest) {
    out(1, "", sprintf("recovery: SIGKILL of the active server to the completion of the first in-place iteration " \
        "that waited for the resume (TANDEM_RESUME=exact, %d kill(s) per buffer)", kills))
    out(1, "0", sprintf("%-7s %7s %8s %8s %8s %8s %9s %9s %9s %10s  %-24s %s", "buffer", "resumed", "min ms", \
        "median", "p95", "max", "guest ms", "native", "exact", "median/it", "target (max)", "verdict"))
    out(1, "1", sprintf("%-7s %7s %8s %8s %8s %8s %9s %9s %9s %10s", "", "", "", "", "", "", "(median)", \
        "it us", "it us", "(native)"))
    for (b = 1; b <= nbuf; b++) {
        id = "recovery." size_label(buffers[b])
        n = nrec[id] + 0
        key = sprintf("2%015d", buffers[b])
        if (n < kills) {
            out(8, key, sprintf("FAILED: %s: %d of %d kills resumed with a result (logs/ say why)", id, n, kills))
            fail = 1
        }
        if (n == 0) {
            out(1, key, sprintf("%-7s %7s", size_label(buffers[b]), "0/" kills))
        } else {
            for (i = 1; i <= n; i++) { v[i] = rec[id, i]; g[i] = guest[id, i]; it[i] = iter_exact[id, i] }
            sort_n(v, n); sort_n(g, n); sort_n(it, n)
            t = target_for(id, "exact")
            verdict = ""
            if (t) {
                verdict = v[n] + 0 <= t_lim[t] + 0 ? "pass" : "MISS"
                count(verdict)
            }
            nat = value["loop." size_label(buffers[b]), "native"]
            r = nat == "" ? "-" : sprintf("%.0fx", median(v, n) * 1000 / nat)
            out(1, key, sprintf("%-7s %7s %8s %8s %8s %8s %9s %9s %9s %10s  %-24s %s", size_label(buffers[b]), \
                n "/" kills, fmt(v[1]), fmt(median(v, n)), fmt(pct(v, n, 95)), fmt(v[n]), fmt(median(g, n)), \
                fmt(nat), fmt(median(it, n)), r, t ? text_of(t) : "", verdict))
        }
        # Every kill's result against the reference loop's.
        line = sprintf("%-20s %-12s %-8s %-18s", id, "x" iters_of(buffers[b]), ref, csum["loop." size_label(buffers[b]), ref])
        if (csum["loop." size_label(buffers[b]), ref] == "") {
            line = line "  no reference checksum"
            fail = 1
        } else {
            bad = 0
            for (i = 1; i <= n; i++)
                if (rec_csum[id, i] != csum["loop." size_label(buffers[b]), ref]) {
                    line = line sprintf("  kill %d MISMATCH %s", i, rec_csum[id, i])
                    bad = 1
                }
            if (!bad) line = line sprintf("  %d kill(s) = %s", n, ref)
            if (bad) fail = 1
        }
        out(6, "0" key, line)
        nrest = 0
        for (i = 1; i <= n; i++) nrest += restored[id, i] + 0 > 0
        if (n) restored_text = restored_text sprintf("%s%s %d/%d", restored_text == "" ? "" : ", ", size_label(buffers[b]), nrest, n)
        # The baseline: no standby, the session must be lost.
        if (lost[id] == "lost")
            out(2, key, sprintf("%-7s session lost, as it must be: %s", size_label(buffers[b]), lost_err[id]))
        else {
            out(2, key, sprintf("%-7s MISSING: no run, or the session was not lost", size_label(buffers[b])))
            fail = 1
        }
    }
    out(2, "0", "")
    out(2, "1", "no standby (baseline): the same kill with no standby")
    if (restored_text != "")
        out(2, "3", "kills after which the standby restored shadows (the kill came after a write of the epoch): " restored_text)
    for (t = 1; t <= ntargets; t++)
        if (t_tr[t] == "published")
            out(2, "4", text_of(t))
}

function iters_of(m,    id) {
    id = "loop." size_label(m)
    return id in iters_seen ? iters_seen[id] : ""
}

function overhead_rows(    n, id, m, c, line) {
    out(3, "", "")
    out(3, "0", "shadowing overhead, no kill: Tandem over tcp with no standby (tcp), with a standby and " \
        "TANDEM_RESUME=exact (exact) or =replay (replay)")
    out(3, "1", sprintf("%-30s %-7s %10s %10s %10s %10s %9s %10s %8s %9s %10s", "measurement", "unit", "native", \
        "tcp", "exact", "replay", "exact/tcp", "replay/tcp", "tcp/nat", "exact/nat", "replay/nat"))
    for (n = 1; n <= nids; n++) {
        id = ids[n]
        # A loop run only as the recovery's reference is no overhead row.
        if (id ~ /^loop\./ && !want_loop) continue
        for (m = 1; m <= 3; m++)
            if (!((id, tmodes[m]) in value)) {
                out(8, sprintf("1%06d", n), "MISSING: " id " over " tmodes[m])
                fail = 1
            }
        out(4, sortkey(id), sprintf("%-30s %-7s %10s %10s %10s %10s %9s %10s %8s %9s %10s", shown[id], \
            unit[id] == "us" ? "us/iter" : unit[id], fmt(value[id, "native"]), fmt(value[id, "tcp"]), \
            fmt(value[id, "exact"]), fmt(value[id, "replay"]), ratio(value[id, "exact"], value[id, "tcp"]), \
            ratio(value[id, "replay"], value[id, "tcp"]), ratio(value[id, "tcp"], value[id, "native"]), \
            ratio(value[id, "exact"], value[id, "native"]), ratio(value[id, "replay"], value[id, "native"])))
        if (!((id, ref) in csum)) {
            out(6, "1" sortkey(id), sprintf("%-20s no %s checksum to compare with", id, ref))
            fail = 1
            continue
        }
        line = sprintf("%-20s %-12s %-8s %-18s", id, substr(shown[id], length(id) + 2), ref, csum[id, ref])
        for (m = 1; m <= 3; m++) {
            c = tmodes[m]
            if (!((id, c) in csum)) { line = line sprintf("  %s missing", c); fail = 1 }
            else if (csum[id, c] == csum[id, ref]) line = line sprintf("  %s = %s", c, ref)
            else { line = line sprintf("  %s MISMATCH %s", c, csum[id, c]); fail = 1 }
        }
        out(6, "1" sortkey(id), line)
    }
}

function memory_rows(    i, id) {
    out(7, "0", "")
    out(7, "1", "the server's GPU memory while the loop runs (largest nvidia-smi sample, MiB):")
    for (i = 1; i <= nmem; i++) {
        id = mem_ids[i]
        out(7, "2" i, sprintf("  %-12s no standby (tcp) %s, active with a standby (exact) %s: %s MiB for shadows", \
            substr(id, 5), mem[id, "tcp"] == "" ? "-" : mem[id, "tcp"] + 0, mem[id, "exact"] == "" ? "-" : mem[id, "exact"] + 0, \
            mem[id, "tcp"] == "" || mem[id, "exact"] == "" ? "?" : sprintf("%+d", mem[id, "exact"] - mem[id, "tcp"])))
    }
}

END {
    if (!have_meta) { print "0||no results"; exit 1 }
    split("tcp exact replay", tmodes, " ")
    fail = 0
    for (n = 1; n <= nids; n++)
        if (ids[n] ~ /^loop\./) iters_seen[ids[n]] = substr(shown[ids[n]], length(ids[n]) + 3)
    if (simulated) out(0, "", label)
    out(0, "1", "device: " device)
    out(0, "2", "")
    do_recovery = 0
    for (k = 1; k <= nbench; k++) {
        if (benchmarks[k] == "recovery") { do_recovery = 1; continue }
        if (benchmarks[k] == "loop") want_loop = 1
        prefix = benchmarks[k] == "loop" ? "loop." : "app." benchmarks[k]
        found = 0
        for (n = 1; n <= nids; n++)
            if (ids[n] == prefix || (prefix ~ /\.$/ && index(ids[n], prefix) == 1)) found = 1
        if (!found) {
            out(8, sprintf("0%06d", k), "MISSING: no result at all from " benchmarks[k])
            fail = 1
        }
    }
    if (do_recovery) recovery_rows()
    noverhead = 0
    for (n = 1; n <= nids; n++) noverhead += ids[n] !~ /^loop\./ || want_loop
    if (noverhead) overhead_rows()
    if (nmem) memory_rows()
    if (nids || do_recovery) {
        out(5, "", "")
        out(5, "0", sprintf("%-20s %-12s %-8s %-18s  %s", "checksums", "size", "ref", "checksum", "Tandem runs"))
    }
    out(9, "0", "")
    out(9, "1", sprintf("targets: %d pass, %d miss, %d not applicable%s", npass, nmiss, nna, \
        simulated ? " (" label ")" : ""))
    out(9, "2", fail ? "recoveries, checksums or measurements: FAILED (above)" : \
        "every kill recovered, the baseline lost its session, all checksums match, no measurement missing")
    exit fail
}
