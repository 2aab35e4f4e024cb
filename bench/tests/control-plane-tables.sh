#!/usr/bin/env bash
# The awk behind the issue-17 GPU tables, row by row (CI: bench_control_plane_tables):
#   bench/control-plane/resize-hops.awk     a share change's hops from its events
#   bench/control-plane/timeline-table.awk  Flyt's Table 7 and decisions.tsv from the decision log
#   bench/control-plane/timeline-data.awk   timeline.tsv from the samples
#   bench/shares/shares-table.awk           step (c): Flyt's Table 6 with mean +- sd per column
# Each case: a name, the input (printf format, \n-separated), the awk command line, and the
# lines the output must contain (one a line; a leading ! means must not).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
cp=$src/bench/control-plane
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0

# check NAME INPUT AWK-ARGS EXPECTED...
check() {
  local name=$1 input=$2 args=$3 out want
  shift 3
  n=$((n + 1))
  printf '%b' "$input" >"$tmp/in"
  # shellcheck disable=SC2086
  out=$(cd "$tmp" && eval "awk $args" 2>&1)
  for want in "$@"; do
    if [[ $want == !* ]]; then
      grep -qF -- "${want#!}" <<<"$out" || continue
      echo "FAIL $name: the output has '${want#!}':"
    else
      grep -qF -- "$want" <<<"$out" && continue
      echo "FAIL $name: no '$want' in:"
    fi
    sed 's/^/    /' <<<"$out"
    fails=$((fails + 1))
    return
  done
  echo "ok   $name"
}

hops="-v streams=16 -v label=no-mps -f $cp/resize-hops.awk in"
ev_full='decision 1000.0005 1.5\nagent 1000000.9 1000002.1\nserver 1000001.2 1000001.9 1000002.2 1000002.7 17\n'
ev_full+='kernel 0 0.3 8 999990\nkernel 1 0.3 8 999991\nkernel 2 0.31 8 999992\nkernel 3 0.29 8 999993\n'
ev_full+='kernel 4 0.33 8 999994\nkernel 5 0.30 8 1000002.0\nkernel 6 0.05 68 1000003.1\nkernel 7 0.05 68 1000003.3\n'
#       pass streams dec->agent agent->srv ->ready ->taken ->moved moved->kern dec->applied dec->kernel old new moved
check "hops: each hop from the decision to the first kernel at the new share" "$ev_full" "$hops" \
  "no-mps        16      0.400      0.300     0.700     0.300     0.500       0.400        2.200       2.600" \
  "0.310" "0.050 (68)" " 17"
check "hops: the kernel in flight is the median before the decision, the first 2 (warm-up) left out" \
  'decision 1000 0\nserver 1 2 3 4 1\nkernel 0 9 8 1\nkernel 1 9 8 2\nkernel 2 1 8 3\nkernel 3 2 8 4\nkernel 4 3 8 5\nkernel 5 100 8 6\nkernel 6 1 64 1000001\n' \
  "$hops" "2.500" "1.000 (64)"
check "hops: the first changed kernel after the decision counts, not one before it" \
  'decision 1000 0\nkernel 0 1 8 999000\nkernel 1 1 64 999500\nkernel 2 0.5 64 1000002\n' "$hops" "0.500 (64)"
check "hops: no decision says so" 'kernel 0 1 8 1\n' "$hops" "no set-share decision found"
check "hops: no change says so" 'decision 1 0\nkernel 0 1 8 1\nkernel 1 1 8 2000\n' "$hops" "no change"
check "hops: the header" '' "-v header=1 $hops" "dec->agent" "dec->kernel" "kernel@old"

map='pl-a app1\npl-b app2\n'
d1='{"time":100.5,"agent_ms":1.2,"placement":"pl-a","action":"place","from":"vm1","to":"n-1\\/gpu0 shm 8 SMs","why":"vm-dedicated"}\n'
d1+='{"time":101.0,"agent_ms":1.0,"placement":"pl-a","action":"scale-up","from":"8","to":"16","why":"median p99 above"}\n'
d1+='{"time":102.0,"agent_ms":0,"placement":"pl-b","action":"place","from":"vm1","to":"n-1\\/gpu0 shm 8 SMs","why":"x"}\n'
d1+='{"time":103.0,"agent_ms":0,"placement":"pl-a","action":"hold","from":"16","to":"16","why":"no room"}\n'
d1+='{"time":103.5,"agent_ms":0,"placement":"pl-b","action":"migrate","from":"n-1\\/gpu0","to":"n-2\\/gpu0","why":"full"}\n'
d1+='{"time":104.0,"agent_ms":0,"placement":"pl-a","action":"hold","from":"16","to":"16","why":"no room"}\n'
d1+='{"time":105.0,"agent_ms":0,"placement":"pl-a","action":"hold","from":"16","to":"16","why":"no room"}\n'
d1+='{"time":106.0,"agent_ms":1,"placement":"pl-a","action":"scale-down","from":"16","to":"8","why":"below"}\n'
d1+='{"time":107.0,"agent_ms":0,"placement":"pl-b","action":"release","from":"live","to":"released","why":"ended"}\n'
d1+='{"time":108.0,"agent_ms":0,"placement":"pl-c","action":"drain","from":"up","to":"drained","why":"op"}\n'
printf '%b' "$map" >"$tmp/map"
tt="-v t0=100 -v gpu1=n-1/gpu0 -v gpu2=n-2/gpu0 -v sms1=132 -v sms2=66 -f $cp/timeline-table.awk map in"
check "table7: a first placement starts, its share counts on its GPU" "$d1" "-v mode=table $tt" \
  "      0.5  Start App                  1    6% (8)       0% (0)     app1   n-1/gpu0 shm 8 SMs"
check "table7: a scale-up is Vertical ++ and moves the occupancy" "$d1" "-v mode=table $tt" \
  "      1.0  Vertical ++ (a)            1   12% (16)      0% (0)     app1   8 -> 16 SMs"
check "table7: a second placement is App ++" "$d1" "-v mode=table $tt" "      2.0  App ++                     2   18% (24)"
check "table7: an application's holds in a row are one row with their count, others' decisions between" "$d1" \
  "-v mode=table $tt" "SM limit reached (c)       2   18% (24)      0% (0)     app1   no room to grow (x3 in a row)"
check "table7: a migrate is decided only and changes no occupancy" "$d1" "-v mode=table $tt" \
  "Migrate ++ (b)             2   18% (24)      0% (0)     app2   n-1/gpu0 -> n-2/gpu0, decided only"
check "table7: a scale-down is Vertical --" "$d1" "-v mode=table $tt" "      6.0  Vertical --                2   12% (16)"
check "table7: a release is App -- and frees the share" "$d1" "-v mode=table $tt" \
  "      7.0  App --                     1    6% (8)       0% (0)     app2   session ended"
check "table7: other decisions (drain) are no row" "$d1" "-v mode=table $tt" "!drain" "!     8.0"
check "table7: the header names GPU 2 as a migration target and when it came" "$d1" "-v mode=table -v gpu2_at=20.1 $tt" \
  "GPU 2: n-2/gpu0 (66 SMs, simulated: a migration target only, registered at 20.1 s)"
check "decisions.tsv: every decision, its application, \\/ unescaped" "$d1" "-v mode=decisions $tt" \
  "$(printf '0.50\tapp1\tpl-a\tplace\tvm1\tn-1/gpu0 shm 8 SMs\tvm-dedicated')" \
  "$(printf '8.00\t-\tpl-c\tdrain\tup\tdrained\top')"

printf '0.50\tapp1\tpl-a\tplace\tvm1\tx\ty\n2.00\tapp2\tpl-b\tplace\tvm1\tx\ty\n' >"$tmp/dec.tsv"
s1='0.5\tgpu\t{"index":0,"sms":132,"sm_placed":8,"node":"n-1"}\n0.5\tplacement\t{"placement":"pl-a","tenant":"vm1","sm":8,"x":1}\n'
s1+='1.0\tgpu\t{"index":0,"sms":132,"sm_placed":24,"node":"n-1"}\n1.0\tgpu\t{"index":0,"sms":66,"sm_placed":0,"node":"n-2"}\n'
s1+='1.0\tplacement\t{"placement":"pl-a","tenant":"vm1","sm":16}\n1.0\tplacement\t{"placement":"pl-b","tenant":"vm1","sm":8}\n'
td="-v gpu1=n-1 -v gpu2=n-2 -f $cp/timeline-data.awk dec.tsv in"
check "timeline.tsv: a header with the applications in placement order" "$s1" "$td" \
  "$(printf 't\tgpu1_placed\tgpu1_sms\tgpu2_placed\tgpu2_sms\tapp1\tapp2')"
check "timeline.tsv: one row per sample time; absent GPUs and applications are 0" "$s1" "$td" \
  "$(printf '0.5\t8\t132\t0\t0\t8\t0')" "$(printf '1.0\t24\t132\t0\t66\t16\t8')"

t6='{"step":"c","bes":0,"via":"native","test":"lc","mode":"native-green","bes":0,"app":0,"matmul_n":4096,"n":20,"mean_ms":200.0,"sd_ms":2.0,"p99_ms":204}\n'
t6+='{"step":"c","bes":0,"via":"c0","test":"lc","mode":"plain","bes":0,"app":0,"matmul_n":4096,"n":20,"mean_ms":201.0,"sd_ms":1.0,"p99_ms":203}\n'
t6+='{"step":"c","bes":2,"via":"c2","test":"lc","mode":"plain","bes":2,"app":0,"matmul_n":4096,"n":18,"mean_ms":205.02,"sd_ms":3.0,"p99_ms":210}\n'
t6+='{"step":"c","bes":2,"via":"c2","test":"gapp","mode":"plain","bes":2,"app":1,"matmul_n":4096,"n":10,"mean_ms":210.0,"sd_ms":0.0}\n'
t6+='{"step":"c","bes":2,"via":"c2","test":"gapp","mode":"plain","bes":2,"app":2,"matmul_n":4096,"n":10,"mean_ms":220.0,"sd_ms":0.0}\n'
st="-v device=GPU -v driver=1 -f $src/bench/shares/shares-table.awk in"
check "table6: mean +- sd (calls) per configuration and column" "$t6" "$st" \
  "C-App only         200.00 +- 2.00 (20)        -                          201.00 +- 1.00 (20)" \
  "C-App + 2 G-Apps   -                          -                          205.02 +- 3.00 (18)"
check "table6: the G-Apps' calls pooled: mean 215, sd of both apps' calls" "$t6" "$st" "215.00 +- 5.13 (20)"
check "table6: the C-App mean's variation across configurations, beside Flyt's" "$t6" "$st" \
  "C-App mean across configurations, tandem: 201.00 .. 205.02 ms, (max-min)/min = 2.00 %" \
  "Flyt: C-App 2.02+-0.02 .. 2.04+-0.01 s, (max-min)/min = 1.49 %"
check "table6: steps not run print no section" "$t6" "$st" "!(a) compute-bound" "!(b) resize"
check "table6: Flyt's layout (the default) says the G-Apps share the other 8 SMs" "$t6" "$st" \
  "sharing the other 8 SMs of a 16-SM budget, as Flyt's"
check "table6: --t6-layout own says 8 SMs each" "$t6" "-v t6_layout=own $st" \
  "G-Apps (the same matmul, 8 SMs each)" "!as Flyt's"

echo "$((n - fails)) of $n passed"
[ "$fails" = 0 ]
