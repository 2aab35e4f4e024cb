#!/usr/bin/env bash
# scripts/tandem-compare on the SIMULATED GPU: no native runs here, so each
# program's shm run is compared with its tcp run.  Guards the verdicts the
# runner gives: a real example passes, output that differs only in timing
# lines passes, a different output or exit status fails with its first
# error (not a line every run prints), a program past the time limit fails
# as timed out, and a failure
# does not make the next program fail; a program's own mask hides only the
# lines it names; with native runs, output that varies between two native
# runs is told apart from output Tandem changes.
set -uo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tab=$'\t'
cat >"$work/list.tsv" <<LIST
# name	dir	command
vector_add${tab}.${tab}$build/examples/vector_add
timing${tab}.${tab}echo "kernel took \$RANDOM.\$RANDOM ms at 0x\$RANDOM"; echo result 42
output${tab}.${tab}case \$TANDEM_SERVER in shm:*) echo result 41;; *) echo result 42;; esac
status${tab}.${tab}case \$TANDEM_SERVER in shm:*) echo boom >&2; exit 3;; esac; echo fine
slow${tab}.${tab}case \$TANDEM_SERVER in shm:*) sleep 30;; esac; echo done
seeded${tab}.${tab}echo "estimate \$RANDOM"; echo "answer \${TANDEM_SERVER%%:*}"${tab}^estimate
errword${tab}.${tab}echo "TIME TO SET ERROR TOOK: 0.\$RANDOM"; echo "XE: \${TANDEM_SERVER%%:*}"
matmul${tab}.${tab}$build/examples/matmul
LIST
"$(dirname "$0")/../../scripts/tandem-compare" --tandem "$build" --backend sim --no-native --timeout 3 \
  --out "$work/out" "$work/list.tsv" >"$work/stdout" 2>&1
rc=$?
cat "$work/stdout"
fails=0 passes=0
check() { # name expected-shm-verdict [pattern in first error]
  local row verdict err
  row=$(grep "^$1$tab" "$work/out/results.tsv")
  verdict=$(cut -f9 <<<"$row") err=$(cut -f13 <<<"$row")
  if [ "$verdict" != "$2" ]; then echo "FAIL $1: shm verdict '$verdict', expected $2"; fails=$((fails + 1)); return; fi
  if [ -n "${3:-}" ] && ! grep -q -- "$3" <<<"$err"; then echo "FAIL $1: first error '$err' lacks '$3'"; fails=$((fails + 1)); return; fi
  echo "ok   $1: $verdict${err:+ ($err)}"; passes=$((passes + 1))
}
check vector_add PASS
check timing PASS
check output FAIL "'result 41' where tcp has 'result 42'"
check status FAIL "exit 3 (tcp 0): boom"
check slow FAIL "timed out"
check seeded FAIL "output differs: 'answer shm' where tcp has 'answer tcp'"
# A line with "ERROR" in it that every run prints is not the failure (the first error names the
# line that differs: particlefilter_naive on the H200, 2026-12-02).
check errword FAIL "output differs: 'XE: shm' where tcp has 'XE: tcp'"
check matmul PASS
if [ $rc -ne 1 ]; then echo "FAIL runner exit status $rc with failures present, expected 1"; fails=$((fails + 1)); else passes=$((passes + 1)); fi
grep -q "shm: 3 of 8 pass" "$work/out/table.md" && passes=$((passes + 1)) ||
  { echo "FAIL table summary: $(grep 'shm:' "$work/out/table.md")"; fails=$((fails + 1)); }
# With native runs (a stand-in native library: these programs use no GPU),
# run twice: output that differs between the two native runs is VARIES and
# not counted; output only Tandem changes is FAIL.
mkdir -p "$work/native"
ln -s "$build/lib/libcudart.so.13" "$work/native/libcudart.so.13"
cat >"$work/native.tsv" <<LIST
stable${tab}.${tab}echo result 42
varies${tab}.${tab}echo "pick \$RANDOM\$RANDOM"
remoted${tab}.${tab}echo "served by \${TANDEM_SERVER%%:*}"
LIST
"$(dirname "$0")/../../scripts/tandem-compare" --tandem "$build" --backend sim --native-lib "$work/native" \
  --transports tcp --timeout 10 --out "$work/out2" "$work/native.tsv" >"$work/stdout2" 2>&1
cat "$work/stdout2"
check2() { # name expected-tcp-verdict
  local v
  v=$(grep "^$1$tab" "$work/out2/results.tsv" | cut -f4)
  if [ "$v" = "$2" ]; then echo "ok   $1: $v"; passes=$((passes + 1)); else echo "FAIL $1: tcp verdict '$v', expected $2"; fails=$((fails + 1)); fi
}
check2 stable PASS
check2 varies VARIES
check2 remoted FAIL
grep -q "1 run through Tandem but their output varies" "$work/out2/table.md" && grep -q "tcp: 1 of the 2 that pass natively" "$work/out2/table.md" &&
  passes=$((passes + 1)) || { echo "FAIL native table: $(tail -3 "$work/out2/table.md")"; fails=$((fails + 1)); }
echo "tandem-compare checks: $passes passed, $fails failed"
[ $fails -eq 0 ]
