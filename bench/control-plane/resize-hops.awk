# The hops of one share change (tests/gpu/run-control-plane-gpu.sh, docs/control-plane.md
# "Resize latency"): from events the script gathered, one line each, all times wall-clock ms
# (the decision's in seconds, as /v1/decisions gives it):
#   decision TIME_S AGENT_MS             the orchestrator's set-share decision (tandemctl json decisions)
#   agent RECEIVED_MS ANSWERED_MS        the node agent's forward (its log)
#   server ASKED READY TAKEN MOVED N     the server (its log): set_share asked, the share made (cuda: its
#                                        green context), taken at the session's next work, N streams moved
#   kernel K MS SMS_SEEN DONE_MS         each kernel of the guest (shares resize)
# Prints one row (with -v header=1 the header first) for -v streams=N -v label=TEXT:
# decision -> agent received -> server asked -> share ready -> taken -> streams moved -> first
# kernel at the new share done; decision -> applied (moved), decision -> first kernel; and the
# kernel in flight: the median kernel before the decision (at the old share) and the first one at
# the new share (with the SMs it ran on).
# A figure that cannot be had is "-"; a row without decision or first kernel says why.
function median(a, n,   i, j, t) {
  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
  return n ? (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) : ""
}
function d(a, b) { return (a == "" || b == "") ? "-" : sprintf("%.3f", b - a) }
$1 == "decision" { D = $2 * 1000; agent_ms = $3 }
$1 == "agent" { R = $2; RA = $3 }
$1 == "server" { SA = $2; SR = $3; ST = $4; SM = $5; moved = $6 }
$1 == "kernel" { nk++; kms[nk] = $3; kseen[nk] = $4; kdone[nk] = $5 }
END {
  if (header)
    printf "%-8s %7s %10s %10s %9s %9s %9s %11s %12s %11s %13s %13s %6s\n", "pass", "streams", "dec->agent",
      "agent->srv", "->ready", "->taken", "->moved", "moved->kern", "dec->applied", "dec->kernel", "kernel@old",
      "kernel@new", "moved"
  if (D == "") { printf "%-8s %7s no set-share decision found\n", label, streams; exit }
  base = nk ? kseen[1] : ""
  first = 0; n = 0
  for (k = 1; k <= nk; k++) {
    if (kdone[k] < D && k > 2) old[++n] = kms[k]
    if (!first && kseen[k] != base && kdone[k] >= D) first = k
  }
  F = first ? kdone[first] : ""
  printf "%-8s %7s %10s %10s %9s %9s %9s %11s %12s %11s %13s %13s %6s\n", label, streams, d(D, R), d(R, SA),
    d(SA, SR), d(SR, ST), d(ST, SM), d(SM, F), d(D, SM), d(D, F), (n ? sprintf("%.3f", median(old, n)) : "-"),
    (first ? sprintf("%.3f (%d)", kms[first], kseen[first]) : "no change"), (moved == "" ? "-" : moved)
}
