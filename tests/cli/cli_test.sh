#!/usr/bin/env bash
# End-to-end test of the `cuckoo` tool: millions of keys through files and pipes, a filter that
# fills up, bad arguments, unreadable, damaged and foreign files. Usage: cli_test.sh PATH_TO_CUCKOO
set -u -o pipefail
CUCKOO=$(realpath "${1:?usage: cli_test.sh PATH_TO_CUCKOO}")
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

# ---- Bad arguments -----------------------------------------------------------------------------
expect_status 2 "no subcommand" -- "$CUCKOO"
expect_status 2 "unknown subcommand" -- "$CUCKOO" frobnicate
expect_status 2 "unknown option" -- "$CUCKOO" query big.cf --no-such-option
expect_status 2 "missing filter" -- "$CUCKOO" add
expect_status 2 "create without capacity" -- "$CUCKOO" create x.cf
expect_status 2 "capacity 0" -- "$CUCKOO" create x.cf --capacity 0
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

if [ "$FAILURES" -ne 0 ]; then
  echo "$FAILURES failure(s)" >&2
  exit 1
fi
echo "cli_test: all passed"
