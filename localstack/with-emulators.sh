#!/usr/bin/env bash
# Run a command with emulators of its own, stopped afterwards whatever
# happens:
#
#   localstack/with-emulators.sh [dynamodb] [goaws] [redis] -- command [args...]
#
# Each emulator gets the port in its usual variable (DYNAMODB_LOCAL_PORT,
# GOAWS_PORT, REDIS_PORT) when that is set, else a free port picked for this run, so
# two runs on one machine (two checkouts, or one twice) never share or stop
# each other's servers. When another process takes a picked port first,
# another is picked. The command sees FLAGPLANE_DYNAMODB_ENDPOINT and
# FLAGPLANE_SQS_ENDPOINT (and FLAGPLANE_TEST_REDIS, host:port). A start that fails fails the run: nothing skips.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# emulator.sh gives die and free_port; its per-port file names go unused.
name=with-emulators port=0 run_dir=.
# shellcheck source=localstack/emulator.sh
source "$here/emulator.sh"

wanted=()
while (($#)) && [[ "$1" != -- ]]; do
	case "$1" in
	dynamodb | goaws | redis) wanted+=("$1") ;;
	*) die "unknown emulator '$1' (dynamodb, goaws, redis)" ;;
	esac
	shift
done
(($# >= 2)) || die "usage: $0 [dynamodb] [goaws] [redis] -- command [args...]"
shift

started=() # "script setting port" of every emulator up, stopped last first
# The same list in a file, for the watcher below.
state="$(mktemp "${TMPDIR:-/tmp}/flagplane-emulators.XXXXXX")"
watcher=""
cleanup() {
	local i s
	[[ -z "$watcher" ]] || kill "$watcher" 2>/dev/null || true
	for ((i = ${#started[@]} - 1; i >= 0; i--)); do
		read -r -a s <<<"${started[i]}"
		env "${s[1]}=${s[2]}" "$here/${s[0]}" stop || true
	done
	rm -f "$state"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The watcher stops the servers when this script dies without running its
# traps (kill -9 of this process alone): a run never leaves servers behind.
# Its output goes nowhere, so a pipe after this script does not wait on it.
parent=$$
(
	while kill -0 "$parent" 2>/dev/null; do sleep 1; done
	while read -r script setting p; do
		env "$setting=$p" "$here/$script" stop
	done <"$state"
	rm -f "$state"
) </dev/null >/dev/null 2>&1 &
watcher=$!

# up starts script on the port in variable setting (set: that one only;
# unset: a free one, again when another process got there first) and sets
# up_port.
up() {
	local script=$1 setting=$2 p try rc
	if [[ -n "${!setting:-}" ]]; then
		up_port="${!setting}"
		env "$setting=$up_port" "$here/$script" start
		started+=("$script $setting $up_port")
		echo "$script $setting $up_port" >>"$state"
		return
	fi
	for ((try = 1; try <= 5; try++)); do
		p="$(free_port)"
		rc=0
		env "$setting=$p" "$here/$script" start || rc=$?
		if ((rc == 0)); then
			up_port=$p
			started+=("$script $setting $p")
			echo "$script $setting $p" >>"$state"
			return
		fi
		((rc == 4)) || exit "$rc"
		echo "$script: port $p was taken meanwhile; picking another" >&2
	done
	die "$script: no port found after 5 tries"
}

for e in "${wanted[@]}"; do
	case "$e" in
	dynamodb)
		up dynamodb-local.sh DYNAMODB_LOCAL_PORT
		export FLAGPLANE_DYNAMODB_ENDPOINT="http://127.0.0.1:$up_port"
		;;
	goaws)
		up goaws.sh GOAWS_PORT
		export FLAGPLANE_SQS_ENDPOINT="http://127.0.0.1:$up_port"
		;;
	redis)
		up redis.sh REDIS_PORT
		export FLAGPLANE_TEST_REDIS="127.0.0.1:$up_port"
		;;
	esac
done

rc=0
"$@" || rc=$?
exit "$rc"
