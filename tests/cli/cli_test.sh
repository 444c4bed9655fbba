#!/usr/bin/env bash
# End-to-end test of the `cuckoo` tool: millions of keys through files and pipes, a filter that
# fills up, bad arguments, unreadable, damaged and foreign files, concurrent writers and the writer
# lock. Usage: cli_test.sh PATH_TO_CUCKOO
set -u -o pipefail
CUCKOO=$(realpath "${1:?usage: cli_test.sh PATH_TO_CUCKOO}")
TESTS_DIR=$(realpath "$(dirname "$0")/..")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cuckoo-cli-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
FAILURES=0

fail() { echo "FAIL: $*" >&2; FAILURES=$((FAILURES + 1)); }
# expect_status WANT DESCRIPTION -- COMMAND...: runs COMMAND, stdout to out, stderr to err.
expect_status() {
  local want=$1 what=$2; shift 3
  "$@" >out 2>err
  local got=$?
  [ "$got" -eq "$want" ] || fail "$what: exit status $got, expected $want (stderr: $(head -c 300 err))"
}
expect_output() {  # expect_output WANT DESCRIPTION: the last command's stdout
  [ "$(cat out)" = "$1" ] || fail "$2: output '$(head -c 200 out)', expected '$1'"
}
expect_stderr_has() {
  grep -q -- "$1" err || fail "$2: stderr lacks '$1': $(head -c 300 err)"
}

N=3000000
seq 1 $N > members.txt
seq $((N + 1)) $((2 * N)) > others.txt

# ---- A few million keys through files and pipes ------------------------------------------------
expect_status 0 "create" -- "$CUCKOO" create big.cf --capacity $N --fpr 0.001
expect_status 0 "add from a file" -- "$CUCKOO" add big.cf members.txt
[ -s err ] && fail "add printed to stderr when not on a terminal: $(head -c 200 err)"
expect_status 0 "query members from a pipe" -- bash -c "cat members.txt | '$CUCKOO' query big.cf --count"
expect_output $N "every member found"
expect_status 0 "query members, keys printed" -- bash -c "'$CUCKOO' query big.cf - < members.txt | cmp -s - members.txt"
expect_status 1 "--absent on members selects nothing" -- "$CUCKOO" query big.cf --absent --count members.txt
expect_output 0 "--absent on members"
"$CUCKOO" query big.cf --count others.txt > out 2>err
false_positives=$(cat out)
[ "$false_positives" -lt 6000 ] || fail "false positives $false_positives of $N at fpr 0.001"
expect_status 0 "--absent on non-members" -- "$CUCKOO" query big.cf --absent --count others.txt
expect_output $((N - false_positives)) "--absent counts the rest"
expect_status 0 "info" -- "$CUCKOO" info big.cf
grep -q "items *$N" out || fail "info items: $(cat out)"
grep -q "checksum *ok" out || fail "info checksum: $(cat out)"

# Removing half: the removed are (nearly all) gone, the rest are all still there.
head -n $((N / 2)) members.txt > first_half.txt
tail -n $((N / 2)) members.txt > second_half.txt
expect_status 0 "remove through a pipe" -- bash -c "cat first_half.txt | '$CUCKOO' remove big.cf"
expect_status 0 "the other half is intact" -- "$CUCKOO" query big.cf --count second_half.txt
expect_output $((N / 2)) "no false negatives after remove"
"$CUCKOO" query big.cf --count first_half.txt > out
[ "$(cat out)" -lt 3000 ] || fail "removed keys still found: $(cat out)"

# Integer keys.
expect_status 0 "create u64" -- "$CUCKOO" create ints.cf --capacity 100000 --bits 16 --bucket-size 8 --seed 0x1234
expect_status 0 "add --u64" -- bash -c "seq 0 7 700000 | '$CUCKOO' add ints.cf --u64"
expect_status 0 "query --u64" -- bash -c "seq 0 7 700000 | '$CUCKOO' query ints.cf --u64 --count"
expect_output 100001 "all integer keys found"
expect_status 2 "a non-integer under --u64" -- bash -c "printf '1\nx2\n' | '$CUCKOO' query ints.cf --u64"
expect_stderr_has "(stdin):2: not a 64-bit unsigned integer" "bad integer named with its line"

# Lines are keys exactly: empty lines are keys, a last line needs no newline.
expect_status 0 "create text" -- "$CUCKOO" create text.cf --capacity 10
expect_status 0 "add odd lines" -- bash -c "printf 'alpha\n\nbeta gamma' | '$CUCKOO' add text.cf"
expect_status 0 "query odd lines" -- bash -c "printf 'beta gamma\n\nalpha\ndelta\n' | '$CUCKOO' query text.cf"
expect_output "$(printf 'beta gamma\n\nalpha')" "lines as given"

# ---- The full-filter path ----------------------------------------------------------------------
expect_status 0 "create small" -- "$CUCKOO" create small.cf --capacity 1000 --bits 8
expect_status 3 "add stops when full, status 3" -- "$CUCKOO" add small.cf members.txt
expect_stderr_has "small.cf is full" "full message"
expect_stderr_has "did not fit" "full message"
items=$("$CUCKOO" info small.cf | awk '/^items/ {print $2}')
[ "$items" -ge 1000 ] || fail "a filter for 1000 holds only $items"
expect_status 0 "every accepted key was saved" -- bash -c "head -n $items members.txt | '$CUCKOO' query small.cf --count"
expect_output "$items" "accepted keys all present"
expect_status 0 "the file of a full filter is sound" -- "$CUCKOO" info small.cf
grep -q "^growable *no\$" out || fail "info of a fixed filter: $(head -c 300 out)"
grep -q "format version 1\$" out || fail "a fixed filter is not format version 1: $(grep format out)"

# ---- Growable filters: add doubles the file instead of stopping -------------------------------
# info_field NAME FILE: the first word after NAME in `cuckoo info FILE`.
info_field() {
  "$CUCKOO" info "$2" | awk -v name="$1" 'index($0, name " ") == 1 {
    split(substr($0, length(name) + 1), words, " "); print words[1]; exit }'
}
growable_start=$(date +%s%N)
head -n 200000 members.txt > grow1.txt
sed -n '200001,300000p' members.txt > grow2.txt
cat grow1.txt grow2.txt > grow_all.txt
head -n 150000 grow_all.txt > grow_first_half.txt
tail -n 150000 grow_all.txt > grow_second_half.txt
expect_status 0 "create --grow" -- "$CUCKOO" create grow.cf --grow --capacity 1000
grep -q "growable, starting capacity 1000" out || fail "create --grow says: $(cat out)"
expect_status 0 "add 200000 keys to a growable filter made for 1000" -- "$CUCKOO" add grow.cf grow1.txt
[ -s err ] && fail "growable add printed to stderr: $(head -c 200 err)"
expect_status 0 "query the grown filter" -- "$CUCKOO" query grow.cf --count grow1.txt
expect_output 200000 "every key added to the growable filter found"
expect_status 0 "info of a growable filter" -- "$CUCKOO" info grow.cf
grep -q "^growable *yes" out || fail "info does not say growable: $(head -c 300 out)"
grep -q "format version 2\$" out || fail "a growable filter is not format version 2: $(grep format out)"
grep -q "^start capacity *1000\$" out || fail "info start capacity: $(grep capacity out)"
grep -q "^items *200000\$" out || fail "info items after growing: $(grep items out)"
grep -q "^checksum *ok" out || fail "info checksum of a grown filter: $(grep checksum out)"
for field in "base fingerprint" "slot bits" "compared bits" "shortest" "stash" "expected FPR"; do
  grep -q "^$field " out || fail "info of a growable filter lacks '$field': $(head -c 600 out)"
done
grep -q "^width schedule *bare first" out || fail "info width schedule: $(grep schedule out)"
doublings1=$(awk '/^doublings/ {print $2}' out)
[ "${doublings1:-0}" -ge 7 ] || fail "200000 keys from capacity 1000: only '$doublings1' doublings"
capacity1=$(awk '/^capacity/ {print $2}' out)
[ "${capacity1:-0}" -eq $((1000 << doublings1)) ] || fail "capacity $capacity1 after $doublings1 doublings"
expect_status 0 "a second add grows it further" -- "$CUCKOO" add grow.cf grow2.txt
doublings2=$(info_field doublings grow.cf)
[ "${doublings2:-0}" -gt "$doublings1" ] || fail "300000 keys: doublings $doublings2, was $doublings1"
expect_status 0 "query after the second add" -- bash -c "cat grow_all.txt | '$CUCKOO' query grow.cf --count"
expect_output 300000 "all keys of both adds found"
"$CUCKOO" query grow.cf --count others.txt > out
[ "$(cat out)" -lt 9000 ] || fail "growable filter: $(cat out) false positives of $N at fpr 0.001"
expect_status 0 "remove half from the growable filter" -- "$CUCKOO" remove grow.cf grow_first_half.txt
grep -q "removed 150000 keys" out || fail "remove on a growable filter: $(cat out)"
expect_status 0 "the other half is intact" -- "$CUCKOO" query grow.cf --count grow_second_half.txt
expect_output 150000 "no false negatives after remove on a growable filter"
"$CUCKOO" query grow.cf --count grow_first_half.txt > out
[ "$(cat out)" -lt 1500 ] || fail "keys removed from a growable filter still found: $(cat out)"
[ "$(info_field items grow.cf)" = 150000 ] || fail "items after remove: $(info_field items grow.cf)"
# Blocked filters: create --blocked (format version 4), add, query, remove, info; a target below
# the blocked format's rate and a combination with --grow are refused with status 2.
expect_status 0 "create --blocked" -- "$CUCKOO" create blocked.cf --blocked --capacity 300000
grep -q "created blocked.cf: blocked, capacity 300000" out || fail "create --blocked says: $(cat out)"
expect_status 0 "add to a blocked filter" -- "$CUCKOO" add blocked.cf grow_all.txt
expect_status 0 "query the blocked filter" -- "$CUCKOO" query blocked.cf --count grow_all.txt
expect_output 300000 "every key added to the blocked filter found"
"$CUCKOO" query blocked.cf --count others.txt > out
[ "$(cat out)" -lt 7500 ] || fail "blocked filter: $(cat out) false positives of $N (its bound: 0.25% at capacity)"
expect_status 0 "info of a blocked filter" -- "$CUCKOO" info blocked.cf
grep -q "^blocked *yes" out || fail "info does not say blocked: $(head -c 400 out)"
grep -q "format version 4\$" out || fail "a blocked filter is not format version 4: $(grep format out)"
grep -q "^items *300000\$" out || fail "info items of the blocked filter: $(grep items out)"
grep -q "^checksum *ok" out || fail "info checksum of a blocked filter: $(grep checksum out)"
expect_status 0 "remove half from the blocked filter" -- "$CUCKOO" remove blocked.cf grow_first_half.txt
expect_status 0 "the other half of the blocked filter is intact" -- "$CUCKOO" query blocked.cf --count grow_second_half.txt
expect_output 150000 "no false negatives after remove on a blocked filter"
expect_status 2 "--blocked with a target below its rate" -- "$CUCKOO" create b2.cf --blocked --capacity 10 --fpr 0.001
expect_stderr_has "target_fpr must be in" "the refused --blocked target"
expect_status 2 "--blocked with --grow" -- "$CUCKOO" create b3.cf --blocked --grow --capacity 10
expect_stderr_has "cannot be combined" "--blocked with --grow"
# Integer keys, bucket size 2 and a --bits below the growable minimum (raised to 11).
expect_status 0 "create --grow u64" -- "$CUCKOO" create grow_ints.cf --grow --capacity 100 --bucket-size 2 --bits 8
expect_status 0 "add --u64 to a growable filter" -- bash -c "seq 0 7 700000 | '$CUCKOO' add grow_ints.cf --u64"
expect_status 0 "query --u64 a growable filter" -- bash -c "seq 0 7 700000 | '$CUCKOO' query grow_ints.cf --u64 --count"
expect_output 100001 "all integer keys found in the growable filter"
expect_status 0 "remove --u64 from a growable filter" -- bash -c "seq 0 7 350000 | '$CUCKOO' remove grow_ints.cf --u64"
expect_status 0 "query --u64 the rest" -- bash -c "seq 350007 7 700000 | '$CUCKOO' query grow_ints.cf --u64 --count"
expect_output 50000 "the integer keys not removed are all found"
[ "$(info_field "base fingerprint" grow_ints.cf)" = 11 ] || fail "--bits 8 --grow: base width $(info_field "base fingerprint" grow_ints.cf)"
# Status 3 only when an insert is really refused: 2b copies of one key is a documented limit.
expect_status 3 "a growable filter refuses a ninth copy of one key" -- bash -c "yes same | head -n 20 | '$CUCKOO' add grow_ints.cf"
expect_stderr_has "grow_ints.cf is full and cannot grow" "growable refusal message"
expect_stderr_has "(stdin):5" "growable refusal names the line (2b = 4 copies fit)"
expect_status 0 "the copies that fit were saved" -- bash -c "printf 'same\n' | '$CUCKOO' query grow_ints.cf --count"
# Refusals, damage.
expect_status 2 "create --grow --semi-sort is refused" -- "$CUCKOO" create grow_semi.cf --grow --semi-sort --capacity 1000
expect_stderr_has "--grow and --semi-sort cannot be combined" "--grow --semi-sort explained"
[ -e grow_semi.cf ] && fail "a refused create --grow --semi-sort left a file"
cp grow.cf grow_damaged.cf
printf '\xff' | dd of=grow_damaged.cf bs=1 seek=300 conv=notrunc status=none
expect_status 2 "damaged growable: info" -- "$CUCKOO" info grow_damaged.cf
grep -q "MISMATCH" out || fail "info does not report the growable file's checksum mismatch"
expect_status 2 "damaged growable: query" -- "$CUCKOO" query grow_damaged.cf grow1.txt
expect_stderr_has "checksum mismatch" "growable damage named"
# Concurrent adds on a growable filter: every writer's keys kept, across doublings.
for w in 1 2; do sed "s/^/g$w-/" grow2.txt > "grow_writer$w.txt"; done
for round in 1 2 3; do
  rm -f grow_many.cf
  "$CUCKOO" create grow_many.cf --grow --capacity 1000 > /dev/null
  pids=()
  for w in 1 2; do
    "$CUCKOO" add grow_many.cf "grow_writer$w.txt" > "grow_add$w.out" 2> "grow_add$w.err" &
    pids+=($!)
  done
  for w in 1 2; do
    wait "${pids[$((w - 1))]}" || fail "round $round: growable writer $w exited $?: $(head -c 300 "grow_add$w.err")"
  done
  expect_status 0 "round $round: query after concurrent growable adds" -- bash -c "cat grow_writer1.txt grow_writer2.txt | '$CUCKOO' query grow_many.cf --count"
  expect_output 200000 "round $round: every key of both concurrent growable writers found"
  [ "$(info_field items grow_many.cf)" = 200000 ] || fail "round $round: items $(info_field items grow_many.cf)"
done
echo "growable filters: $((($(date +%s%N) - growable_start) / 1000000)) ms"

# ---- Bad arguments -----------------------------------------------------------------------------
expect_status 2 "no subcommand" -- "$CUCKOO"
expect_status 2 "unknown subcommand" -- "$CUCKOO" frobnicate
expect_status 2 "unknown option" -- "$CUCKOO" query big.cf --no-such-option
expect_status 2 "missing filter" -- "$CUCKOO" add
expect_status 2 "create without capacity" -- "$CUCKOO" create x.cf
expect_status 2 "capacity 0" -- "$CUCKOO" create x.cf --capacity 0
expect_stderr_has "expected a whole number from 1 to 18446744073709551615, got '0'" "capacity 0"
# Out of range or not digits: refused with the range and the value as given (CLI11's conversion
# took -1 and values past 2^64 as 2^64 - 1, and --bits 0 as "derive from --fpr").
for bad in "--capacity -5" "--capacity 1.5" "--capacity 1e6" "--capacity abc" \
  "--capacity 18446744073709551616" "--seed -1" "--seed 0x1ffffffffffffffff" "--seed 0x" \
  "--seed 12z" "--bits 0" "--bits 33" "--max-kicks -1" "--max-kicks 4294967296"; do
  set -- $bad
  args=(--capacity 10 "$1" "$2")
  [ "$1" = --capacity ] && args=("$1" "$2")
  expect_status 2 "$bad" -- "$CUCKOO" create x.cf "${args[@]}"
  expect_stderr_has "expected a whole number from .* got '$2'" "$bad"
done
[ ! -e x.cf ] || fail "a refused create left x.cf behind"
expect_status 0 "--seed at 2^64 - 1, in hex" -- "$CUCKOO" create seed.cf --capacity 10 --seed 0xFFFFFFFFFFFFFFFF
expect_status 0 "info of it" -- "$CUCKOO" info seed.cf
grep -q "seed 0xffffffffffffffff" out || fail "--seed 0xFFFFFFFFFFFFFFFF: $(grep seed out)"
expect_status 2 "bucket size 3" -- "$CUCKOO" create x.cf --capacity 10 --bucket-size 3
expect_status 2 "--fpr with --bits" -- "$CUCKOO" create x.cf --capacity 10 --fpr 0.01 --bits 8
expect_status 2 "fpr out of range" -- "$CUCKOO" create x.cf --capacity 10 --fpr 2
expect_stderr_has "target_fpr" "the bad field is named"
expect_status 2 "bits out of range" -- "$CUCKOO" create x.cf --capacity 10 --bits 40
[ -e x.cf ] && fail "a failed create left a file"
expect_status 2 "create refuses to overwrite" -- "$CUCKOO" create small.cf --capacity 10
expect_status 0 "create --force overwrites" -- "$CUCKOO" create text.cf --capacity 10 --force
for command in "" create add query remove info; do
  expect_status 0 "--help for '$command'" -- "$CUCKOO" $command --help
  grep -q "Usage" out || fail "--help for '$command' prints no usage"
done

# ---- Unreadable, damaged and foreign files -----------------------------------------------------
expect_status 2 "missing filter file" -- "$CUCKOO" query nothing.cf members.txt
expect_stderr_has "nothing.cf" "missing file named"
expect_status 2 "missing key file" -- "$CUCKOO" query big.cf no-such-keys.txt
expect_status 2 "a directory as key file" -- "$CUCKOO" query big.cf .
expect_status 2 "a directory as filter" -- "$CUCKOO" info .
expect_status 2 "not a filter" -- "$CUCKOO" query members.txt members.txt
expect_stderr_has "wrong magic" "foreign file"
if [ "$(id -u)" != 0 ]; then  # root reads anything: permissions cannot be tested as root
  cp small.cf locked.cf && chmod 000 locked.cf
  expect_status 2 "unreadable filter" -- "$CUCKOO" info locked.cf
fi
cp small.cf damaged.cf
printf '\xff' | dd of=damaged.cf bs=1 seek=200 conv=notrunc status=none
cp damaged.cf damaged-before.cf
expect_status 2 "damaged: info" -- "$CUCKOO" info damaged.cf
grep -q "MISMATCH" out || fail "info does not report the checksum mismatch"
expect_status 2 "damaged: query" -- "$CUCKOO" query damaged.cf members.txt
expect_stderr_has "checksum mismatch" "damage named"
expect_status 2 "damaged: add" -- "$CUCKOO" add damaged.cf members.txt
cmp -s damaged.cf damaged-before.cf || fail "a failed add changed the file"
head -c 1000 small.cf > truncated.cf
expect_status 2 "truncated" -- "$CUCKOO" query truncated.cf members.txt
expect_stderr_has "truncated" "truncation named"
cp ints.cf ints-before.cf
expect_status 2 "bad input leaves the filter untouched" -- bash -c "printf '5\n6\nseven\n' | '$CUCKOO' add ints.cf --u64"
cmp -s ints.cf ints-before.cf || fail "add with bad input changed the file"
ls -a | grep -q '\.tmp-' && fail "temporary files left behind: $(ls -a)"

# ---- Many writers: concurrent add and remove keep every change --------------------------------
# Each writer loads, changes and saves the whole file; without the writer lock the last save
# discards the others' keys. Races are probabilistic, so the check is repeated.
WRITERS=4 PER_WRITER=200000 ROUNDS=3
for w in $(seq 1 $WRITERS); do seq 1 $PER_WRITER | sed "s/^/w$w-/" > "writer$w.txt"; done
cat writer*.txt > all_writers.txt
concurrent_start=$(date +%s%N)
for round in $(seq 1 $ROUNDS); do
  rm -f many.cf
  "$CUCKOO" create many.cf --capacity $((WRITERS * PER_WRITER * 5 / 4)) > /dev/null
  pids=()
  for w in $(seq 1 $WRITERS); do
    "$CUCKOO" add many.cf "writer$w.txt" > "add$w.out" 2> "add$w.err" &
    pids+=($!)
  done
  for w in $(seq 1 $WRITERS); do
    wait "${pids[$((w - 1))]}" || fail "round $round: writer $w exited $?: $(head -c 300 "add$w.err")"
  done
  expect_status 0 "round $round: query after concurrent adds" -- "$CUCKOO" query many.cf --count all_writers.txt
  expect_output $((WRITERS * PER_WRITER)) "round $round: every key of every concurrent writer found"
  "$CUCKOO" info many.cf > out 2>&1
  grep -q "items *$((WRITERS * PER_WRITER))\$" out || fail "round $round: info after concurrent adds: $(grep items out)"
done
echo "concurrent add: $ROUNDS rounds of $WRITERS writers x $PER_WRITER keys in $((($(date +%s%N) - concurrent_start) / 1000000)) ms"

# remove and add at once on disjoint keys: nothing kept is lost, everything removed is gone.
expect_status 0 "create for remove+add" -- "$CUCKOO" create mixed.cf --capacity 1000000
expect_status 0 "fill for remove+add" -- "$CUCKOO" add mixed.cf writer1.txt writer2.txt
"$CUCKOO" remove mixed.cf writer1.txt > remove.out 2> remove.err &
remove_pid=$!
"$CUCKOO" add mixed.cf writer3.txt > add.out 2> add.err &
add_pid=$!
wait $remove_pid || fail "concurrent remove failed: $(head -c 300 remove.err)"
wait $add_pid || fail "concurrent add failed: $(head -c 300 add.err)"
expect_status 0 "kept keys after remove+add" -- bash -c "cat writer2.txt writer3.txt | '$CUCKOO' query mixed.cf --count"
expect_output $((2 * PER_WRITER)) "remove+add lost no kept or added key"
"$CUCKOO" query mixed.cf --count writer1.txt > out
[ "$(cat out)" -lt 2000 ] || fail "keys removed concurrently with an add are still found: $(cat out)"
"$CUCKOO" info mixed.cf > out
grep -q "items *$((2 * PER_WRITER))\$" out || fail "info after remove+add: $(grep items out)"

# ---- The writer lock: a held lock makes writers wait, then give up; readers never wait ---------
# flock(1) takes flock(2) on the file, the same lock as the tool's writers.
expect_status 0 "create held.cf" -- "$CUCKOO" create held.cf --capacity 1000
expect_status 0 "add to held.cf" -- bash -c "printf 'old\n' | '$CUCKOO' add held.cf"
cp held.cf held-before.cf
hold_lock() {  # hold_lock SECONDS: holds held.cf's lock in the background until SECONDS pass
  flock held.cf sleep "$1" &
  holder=$!
  for _ in $(seq 1 500); do  # until it really holds the lock (bounded: 5 s)
    flock -n held.cf true || return 0
    sleep 0.01
  done
  fail "flock(1) never took the lock"
}
hold_lock 4
started=$(date +%s%N)
expect_status 2 "add gives up on a held lock" -- bash -c "printf 'new\n' | '$CUCKOO' add held.cf --wait 0.2"
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
expect_stderr_has "held.cf: another writer holds the lock" "lock timeout names the file"
expect_stderr_has "gave up after 0.2" "lock timeout says how long it waited"
expect_stderr_has "unchanged" "lock timeout says the file is unchanged"
[ "$elapsed_ms" -ge 200 ] && [ "$elapsed_ms" -lt 3000 ] || fail "add --wait 0.2 took $elapsed_ms ms"
cmp -s held.cf held-before.cf || fail "a writer that timed out changed the file"
expect_status 2 "remove gives up on a held lock" -- bash -c "printf 'old\n' | '$CUCKOO' remove held.cf --wait 0"
expect_stderr_has "another writer holds the lock" "remove's lock timeout"
expect_status 2 "create --force gives up on a held lock" -- "$CUCKOO" create held.cf --capacity 10 --force --wait 0.1
expect_stderr_has "another writer holds the lock" "create --force's lock timeout"
cmp -s held.cf held-before.cf || fail "a create --force that timed out replaced the file"
expect_status 0 "query does not wait for the lock" -- bash -c "printf 'old\n' | timeout 2 '$CUCKOO' query held.cf --count"
expect_output 1 "query reads the locked file"
expect_status 0 "info does not wait for the lock" -- timeout 2 "$CUCKOO" info held.cf
wait $holder
hold_lock 1
expect_status 0 "add waits for the lock (default --wait)" -- bash -c "printf 'new\n' | '$CUCKOO' add held.cf"
expect_status 0 "the waiting add was saved" -- bash -c "printf 'old\nnew\n' | '$CUCKOO' query held.cf --count"
expect_output 2 "both the old and the waiting writer's key"
wait $holder
expect_status 2 "--wait must be a number" -- "$CUCKOO" add held.cf --wait soon
expect_status 2 "--wait must not be negative" -- "$CUCKOO" add held.cf --wait -1
expect_stderr_has "non-negative number of seconds" "bad --wait explained"
expect_status 2 "add to a missing file" -- bash -c "printf 'x\n' | '$CUCKOO' add missing.cf"
expect_stderr_has "missing.cf" "missing file named"
[ -e missing.cf ] && fail "add created a missing filter file"
ls -a | grep -q '\.tmp-' && fail "temporary files left behind by the writers: $(ls -a)"

# ---- An approximate map's file (format version 3): info reads it, the filter commands refuse it --
MAP="$TESTS_DIR/data/golden_v3_map_b4_f12_u32.cf"
expect_status 0 "info on an approximate map" -- "$CUCKOO" info "$MAP"
grep -q "approximate map (cuckoo filter with values), format version 3\$" out \
  || fail "info does not name an approximate map: $(grep format out)"
grep -q "^values *4 bytes per slot" out || fail "info does not show the value width: $(cat out)"
grep -q "^checksum.*ok" out || fail "info does not check a map's checksum: $(grep checksum out)"
cp "$MAP" map.cf
expect_status 2 "query on an approximate map" -- "$CUCKOO" query map.cf members.txt
expect_stderr_has "open it with cuckoo::ApproximateMap" "query on a map says what the file is"
expect_status 2 "add to an approximate map" -- "$CUCKOO" add map.cf members.txt
cmp -s map.cf "$MAP" || fail "add changed an approximate map's file"

if [ "$FAILURES" -ne 0 ]; then
  echo "$FAILURES failure(s)" >&2
  exit 1
fi
echo "cli_test: all passed"
