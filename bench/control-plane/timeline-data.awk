# bench/control-plane/timeline.sh's timeline.tsv from its samples: first decisions.tsv (t, app,
# placement, ...: which application each placement is), then logs/samples.tsv, lines of
# "T<TAB>gpu<TAB>{...}" (tandemctl json gpus) and "T<TAB>placement<TAB>{...}" (tandemctl json
# placements).  Variables: gpu1 and gpu2, the two nodes' names.  One row per sample time:
#   t  gpu1_placed gpu1_sms gpu2_placed gpu2_sms  app1 .. appN (each one's share; 0: not placed)
# Applications are the names decisions.tsv gives, in the order of their first placement.
function field(s, k,   m) {
  if (match(s, "\"" k "\":\"[^\"]*\"")) { m = substr(s, RSTART, RLENGTH); sub("^\"" k "\":\"", "", m); sub(/"$/, "", m); return m }
  if (match(s, "\"" k "\":[^,}]*")) { m = substr(s, RSTART, RLENGTH); sub("^\"" k "\":", "", m); return m }
  return ""
}
function flush(   i) {
  if (cur == "") return
  printf "%s\t%d\t%d\t%d\t%d", cur, placed[gpu1], sms[gpu1], placed[gpu2], sms[gpu2]
  for (i = 1; i <= napps; i++) printf "\t%d", sm[apps[i]]
  printf "\n"
  delete sm; delete placed; delete sms
}
BEGIN { FS = "\t" }
FILENAME == ARGV[1] {   # decisions.tsv
  if ($4 == "place" && $2 != "-" && !($2 in known)) { known[$2] = 1; apps[++napps] = $2 }
  app_of[$3] = $2
  next
}
FNR == 1 {
  printf "t\tgpu1_placed\tgpu1_sms\tgpu2_placed\tgpu2_sms"
  for (i = 1; i <= napps; i++) printf "\t%s", apps[i]
  printf "\n"
}
{
  if ($1 != cur) { flush(); cur = $1 }
  if ($2 == "gpu") { n = field($3, "node"); placed[n] = field($3, "sm_placed"); sms[n] = field($3, "sms") }
  if ($2 == "placement") { k = field($3, "placement"); if (k in app_of) sm[app_of[k]] = field($3, "sm") }
}
END { flush() }
