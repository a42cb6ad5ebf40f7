#!/usr/bin/env bash
# Tests of the emulator scripts, run by `make test-emulators` (part of make
# test): two instances on two ports live and stop independently, a busy
# port is refused with exit 4 and a clear message, a second start on a
# port already served by this checkout is refused rather than shared, stop
# leaves alone a process it did not start, and with-emulators.sh killed
# outright leaves no server behind.
#
#   localstack/emulators-test.sh            goaws and DynamoDB Local
#   EMULATORS_TEST_DYNAMODB=0 ...           goaws only (no Java needed)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
name=emulators-test port=0 run_dir=.
# shellcheck source=localstack/emulator.sh
source "$here/emulator.sh" # free_port, port_in_use

# Two run directories stand for two checkouts (or two runs of one).
tmp="$(mktemp -d "${TMPDIR:-/tmp}/flagplane-emulators-test.XXXXXX")"
run_a="$tmp/a" run_b="$tmp/b"
failures=0
cleanup_cmds=()
cleanup() {
	local i
	for ((i = ${#cleanup_cmds[@]} - 1; i >= 0; i--)); do
		eval "${cleanup_cmds[i]}" >/dev/null 2>&1 || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
pass() { echo "ok: $*"; }

# emu script run_dir port command: runs an emulator script with its port
# and run directory set, output to $tmp/out, and returns its exit code.
emu() {
	local script=$1 dir=$2 p=$3 cmd=$4 rc=0
	case "$script" in
	goaws.sh) GOAWS_RUN_DIR="$dir" GOAWS_PORT="$p" "$here/$script" "$cmd" >"$tmp/out" 2>&1 || rc=$? ;;
	dynamodb-local.sh) DYNAMODB_LOCAL_RUN_DIR="$dir" DYNAMODB_LOCAL_PORT="$p" "$here/$script" "$cmd" >"$tmp/out" 2>&1 || rc=$? ;;
	esac
	return "$rc"
}

# started script dir port: starts it (failing the test run when it cannot:
# nothing here may skip) and stops it on exit.
started() {
	cleanup_cmds+=("emu $1 $2 $3 stop")
	if ! emu "$1" "$2" "$3" start; then
		cat "$tmp/out" >&2
		echo "FAIL: $1 could not start on port $3" >&2
		exit 1
	fi
}

# two_instances script: two runs on two ports; stopping one leaves the
# other answering.
two_instances() {
	local s=$1 p1 p2
	p1="$(free_port)"
	started "$s" "$run_a" "$p1"
	p2="$(free_port)"
	while [[ "$p2" == "$p1" ]]; do p2="$(free_port)"; done
	started "$s" "$run_b" "$p2"
	emu "$s" "$run_a" "$p1" status && emu "$s" "$run_b" "$p2" status ||
		fail "$s: both instances should answer"
	emu "$s" "$run_a" "$p1" stop || fail "$s: stop of the first failed"
	if emu "$s" "$run_b" "$p2" status; then
		pass "$s: stopping the instance on $p1 left the one on $p2 answering"
	else
		fail "$s: stopping the instance on $p1 took down the one on $p2: $(cat "$tmp/out")"
	fi
	if port_in_use "$p1"; then
		fail "$s: port $p1 still answers after stop"
	fi

	# The same port again, from the same checkout: refused, not shared,
	# and the running one is untouched.
	local rc=0
	emu "$s" "$run_b" "$p2" start || rc=$?
	if ((rc == 4)) && grep -q 'already running' "$tmp/out"; then
		pass "$s: a second start on $p2 is refused (exit 4): $(head -n 1 "$tmp/out")"
	else
		fail "$s: a second start on $p2 gave exit $rc: $(cat "$tmp/out")"
	fi
	emu "$s" "$run_b" "$p2" status || fail "$s: the instance on $p2 stopped answering after a refused start"
	emu "$s" "$run_b" "$p2" stop || fail "$s: stop on $p2 failed"
}

# busy_port script port: another checkout's start on a port in use fails
# fast with exit 4 and says so.
busy_port() {
	local s=$1 p=$2 rc=0 began=$SECONDS
	emu "$s" "$tmp/other" "$p" start || rc=$?
	if ((rc == 4)) && grep -q "port $p on 127.0.0.1 is in use" "$tmp/out"; then
		pass "$s: start on busy port $p refused in $((SECONDS - began))s (exit 4): $(head -n 1 "$tmp/out")"
	else
		fail "$s: start on busy port $p gave exit $rc: $(cat "$tmp/out")"
	fi
	[[ ! -f "$tmp/other/${s%.sh}-$p.pid" ]] || fail "$s: a refused start left a pid file"
}

# foreign_pid script: a pid file naming a process this script did not
# start (a stale file whose pid was reused) makes stop do nothing to it.
foreign_pid() {
	local s=$1 p victim
	p="$(free_port)"
	sleep 300 &
	victim=$!
	cleanup_cmds+=("kill $victim")
	mkdir -p "$run_a"
	printf '%s\n%s\n' "$victim" "flagplane-emulator=${s%.sh}-$p-1-1" >"$run_a/${s%.sh}-$p.pid"
	emu "$s" "$run_a" "$p" stop || fail "$s: stop with a foreign pid file failed: $(cat "$tmp/out")"
	if kill -0 "$victim" 2>/dev/null; then
		pass "$s: stop left alone pid $victim, which it did not start"
	else
		fail "$s: stop killed pid $victim, which it did not start"
	fi
	kill "$victim" 2>/dev/null || true
}

# killed_wrapper: with-emulators.sh killed with -9 (no traps run) still
# leaves no server behind: its watcher stops them.
killed_wrapper() {
	local p i
	p="$(free_port)"
	mkdir -p "$run_a"
	cleanup_cmds+=("emu goaws.sh $run_a $p stop")
	# (In braces with stderr closed: bash's "Killed" notice is expected.)
	{ GOAWS_RUN_DIR="$run_a" GOAWS_PORT="$p" "$here/with-emulators.sh" goaws -- \
		bash -c 'kill -9 $PPID' >"$tmp/out" 2>&1 || true; } 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		port_in_use "$p" || [[ -f "$run_a/goaws-$p.pid" ]] || break
		sleep 0.2
	done
	if port_in_use "$p" || [[ -f "$run_a/goaws-$p.pid" ]]; then
		fail "with-emulators.sh killed with -9 left goaws on $p running: $(cat "$tmp/out")"
	else
		pass "with-emulators.sh killed with -9: its watcher stopped goaws on $p"
	fi
}

two_instances goaws.sh
foreign_pid goaws.sh
killed_wrapper

# A goaws instance is the "other process" on a busy port for both scripts.
busy="$(free_port)"
started goaws.sh "$run_a" "$busy"
busy_port goaws.sh "$busy"
busy_port dynamodb-local.sh "$busy"
emu goaws.sh "$run_a" "$busy" status || fail "goaws on $busy stopped answering after refused starts"

if [[ "${EMULATORS_TEST_DYNAMODB:-1}" != 0 ]]; then
	two_instances dynamodb-local.sh
	foreign_pid dynamodb-local.sh
fi

if ((failures > 0)); then
	echo "emulators-test: $failures failure(s)" >&2
	exit 1
fi
echo "emulators-test: ok"
