# bench/control-plane/timeline.sh's tables from the orchestrator's decisions (tandemctl json
# decisions: one JSON object a line, oldest first).  An optional first file of "KEY APP" lines
# names the placements (from each guest's "placed by the orchestrator: placement KEY" line);
# unnamed ones are "-".  Variables: t0 (the timeline's zero, epoch seconds), gpu1 and gpu2
# ("NODE/gpuI" of the two GPUs), sms1 and sms2 (their SMs), and mode:
#   mode=decisions  a TSV: t (s), app, placement, action, from, to, why; every decision
#   mode=table      Flyt's Table 7: per decision that changed something (holds and migrations
#                   repeated by an application with nothing else of its between are one row,
#                   with their count),
#                   the time, the action, the applications placed after it, and each GPU's SMs
#                   placed after it (% of its SMs, and SMs)
# The SMs are followed from the decisions alone: a placement's "N SMs" (its "to"), each
# scale-up or scale-down's "to", a release removes it; a migrate or hold changes nothing.
function field(s, k,   m) {
  if (match(s, "\"" k "\":\"[^\"]*\"")) {   # a string; json-c writes "/" as "\/"
    m = substr(s, RSTART, RLENGTH); sub("^\"" k "\":\"", "", m); sub(/"$/, "", m); gsub(/\\\//, "/", m); return m
  }
  if (match(s, "\"" k "\":[^,}]*")) { m = substr(s, RSTART, RLENGTH); sub("^\"" k "\":", "", m); return m }
  return ""
}
function occ(g, sms,   k, n) {
  n = 0
  for (k in share) if (gpu_of[k] == g) n += share[k]
  return sms > 0 ? sprintf("%3.0f%% (%d)", 100 * n / sms, n) : sprintf("(%d)", n)
}
function row(t, action, app, note) {
  nrows++
  r_t[nrows] = t; r_action[nrows] = action; r_app[nrows] = app; r_note[nrows] = note
  r_count[nrows] = napps; r_g1[nrows] = occ(gpu1, sms1); r_g2[nrows] = occ(gpu2, sms2); r_times[nrows] = 1
}
BEGIN { FS = "\n"; if (sms1 == "") sms1 = 132; if (sms2 == "") sms2 = 132 }
!/^[{]/ && NF { split($0, kv, " "); app_of[kv[1]] = kv[2]; next }
/^[{]/ {
  t = field($0, "time") - t0; key = field($0, "placement"); action = field($0, "action")
  from = field($0, "from"); to = field($0, "to"); why = field($0, "why")
  app = (key in app_of) ? app_of[key] : "-"
  if (mode == "decisions") { printf "%.2f\t%s\t%s\t%s\t%s\t%s\t%s\n", t, app, key, action, from, to, why; next }
  if (action == "place") {
    split(to, w, " "); gpu_of[key] = w[1]; share[key] = w[3] + 0; napps++
    row(t, napps == 1 ? "Start App" : "App ++", app, to)
  } else if (action == "release") {
    if (key in share) { delete share[key]; napps-- }
    row(t, "App --", app, "session ended")
  } else if (action == "scale-up" || action == "scale-down" || action == "set-share") {
    if (key in share) share[key] = to + 0
    row(t, action == "scale-up" ? "Vertical ++ (a)" : action == "scale-down" ? "Vertical --" : "Set share", app, from " -> " to " SMs")
  } else if (action == "migrate" || action == "hold") {
    label = action == "migrate" ? "Migrate ++ (b)" : "SM limit reached (c)"
    if (last_action[key] == action) { r_times[last_row[key]]++; next }   # the same, again
    row(t, label, app, action == "migrate" ? from " -> " to ", decided only" : "no room to grow")
  } else next
  last_action[key] = action; last_row[key] = nrows
}
END {
  if (mode != "table") exit
  printf "Flyt's Table 7 in miniature: orchestration actions under a dynamic multi-application workload%s\n",
    backend == "sim" ? " (SIMULATED GPU: figures not claimed)" : ""
  printf "GPU 1: %s (%d SMs%s); GPU 2: %s (%d SMs, simulated: a migration target only%s)\n", gpu1, sms1,
    (backend == "sim" ? ", simulated" : ""), gpu2, sms2, (gpu2_at != "" ? ", registered at " gpu2_at " s" : "")
  printf "%9s  %-22s %5s  %-12s %-12s %-6s %s\n", "Time (s)", "Action", "Apps", "GPU 1", "GPU 2", "App", "Detail"
  for (i = 1; i <= nrows; i++)
    printf "%9.1f  %-22s %5d  %-12s %-12s %-6s %s%s\n", r_t[i], r_action[i], r_count[i], r_g1[i], r_g2[i], r_app[i],
      r_note[i], (r_times[i] > 1 ? sprintf(" (x%d in a row)", r_times[i]) : "")
  printf "SM occupancy: SMs placed on the GPU after the action, %% of its SMs (SMs).\n"
  printf "(a) Vertical ++: the application's SM share grew (its tail latency was above APP_LATENCY_UPPER).\n"
  printf "(b) Migrate ++: GPU 1 had no SMs left for the growth the VM's budget allowed; the move to GPU 2 is\n"
  printf "    decided and logged, not carried out (live migration is another issue).\n"
  printf "(c) SM limit reached: neither the VM's SM budget nor any GPU had room to grow (hold).\n"
}
