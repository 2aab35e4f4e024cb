#!/usr/bin/env bash
# Proves that proto/calls.c refuses a broken procedure table at build time:
# it compiles calls.c against copies of calls.def, each broken in one way,
# and passes only if every broken copy fails for the stated reason (and the
# unbroken copy compiles, so the harness itself is sound).
#   calls_table.sh CC SOURCE_DIR GEN_DIR CFLAGS...
set -u
cc=$1 src=$2 gen=$3; shift 3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
def=$src/proto/calls.def
failed=0 passed=0

compile() {   # compile(def_copy) -> compiler output in $work/out, status returned
  "$cc" -std=c11 -fsyntax-only -I"$src/proto" -I"$gen" "$@" -DTDM_CALLS_DEF="\"$1\"" \
    "$src/proto/calls.c" >"$work/out" 2>&1
}

expect() {    # expect NAME REGEX FILE: FILE must fail to compile with REGEX in the output
  local name=$1 regex=$2 file=$3
  if compile "$file" "${CFLAGS[@]}"; then
    echo "FAIL $name: the broken table compiled"; failed=$((failed + 1))
  elif ! grep -qE "$regex" "$work/out"; then
    echo "FAIL $name: failed, but not because of the rule (wanted /$regex/):"; sed 's/^/  /' "$work/out" | head -20; failed=$((failed + 1))
  else
    echo "ok   $name"; passed=$((passed + 1))
  fi
}
CFLAGS=("$@")

cp "$def" "$work/good.def"
if compile "$work/good.def" "${CFLAGS[@]}"; then echo "ok   the table as it is compiles"; passed=1; else
  echo "FAIL the unbroken table does not compile:"; cat "$work/out"; exit 1; fi

# A row that lacks a column (here MIRROR).
sed -E 's/^(TDM_CALL\(MALLOC,.*), +MIRROR_FEED\(MAP\)\)/\1)/' "$def" >"$work/missing.def"
expect "a row without a property" 'TDM_CALL.*(requires|arguments)' "$work/missing.def"
# A one-way call numbered among the synchronous ones.
sed -E 's/^TDM_CALL\(EPOCH,( +)265, ONEWAY/TDM_CALL(EPOCH,\1265, SYNC/' "$def" >"$work/mode.def"
expect "a synchronous call numbered as one-way" 'one-way calls, and only they' "$work/mode.def"
# A release made one-way.
sed -E 's/^(TDM_CALL\(FREE, +5, )SYNC/\1ONEWAY/' "$def" >"$work/release.def"
expect "a one-way release" 'calls.def row FREE' "$work/release.def"
# A stream-dependent idleness proof with no stream.
sed -E 's/^(TDM_CALL\(MEMCPY_DTOH,.*tdm_memcpy_dtoh_res, )stream,/\1none,  /' "$def" >"$work/stream.def"
expect "an idleness proof without its stream" 'needs the STREAM column' "$work/stream.def"
# An unknown value in a column.
sed -E 's/^(TDM_CALL\(MEMSET,.*)IDLE_NEVER/\1IDLE_SOMETIMES/' "$def" >"$work/value.def"
expect "an unknown column value" 'IDLE_SOMETIMES' "$work/value.def"
# Two rows with one number.
sed -E 's/^TDM_CALL\(FLUSH,( +)262,/TDM_CALL(FLUSH,\1261,/' "$def" >"$work/dup.def"
expect "two rows with one number" 'duplicate case|its number differs' "$work/dup.def"

for f in missing mode release stream value dup; do
  cmp -s "$def" "$work/$f.def" && { echo "FAIL the edit for '$f' matched nothing in calls.def"; failed=$((failed + 1)); }
done
echo "calls table build checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
