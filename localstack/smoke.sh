#!/usr/bin/env bash
# The README's quick start as a check: create a project, an environment and a
# flag, turn the flag on (semantic patch), evaluate it for a context, turn it
# off (JSON patch), evaluate again, read the audit log, then delete what it
# made. Any unexpected status or answer stops it with exit 1 and says which
# request failed and what came back.
#
#   localstack/smoke.sh URL TOKEN       against a running deployment: the local
#                                       server, the stack's ApiUrl output, or
#                                       LocalStack's API URL
#   localstack/smoke.sh --local BINARY  starts `BINARY serve` on a free
#                                       127.0.0.1 port with a new data file,
#                                       takes the admin token from its first-start
#                                       output, runs the check twice, stops it
#
# Keys are unique per run (smoke-<time>-<random>), so runs never collide with
# each other or with data already there. Only bash, curl and grep are needed.
set -euo pipefail

# Each request may wait out a Lambda cold start, never forever.
CURL_MAX_TIME=${SMOKE_CURL_MAX_TIME:-30}

say() { printf 'smoke: %s\n' "$*"; }
fail() {
	printf 'smoke: FAILED: %s\n' "$*" >&2
	exit 1
}

# request NAME WANT METHOD PATH [BODY [CONTENT-TYPE]] sends one request and
# fails unless it answers WANT; the answer's body is left in $BODY_FILE.
request() {
	local name=$1 want=$2 method=$3 path=$4 body=${5-} ctype=${6:-application/json}
	local args=(-sS --max-time "$CURL_MAX_TIME" -o "$BODY_FILE" -w '%{http_code}'
		-X "$method" -H "Authorization: $TOKEN")
	if [ -n "$body" ]; then
		args+=(-H "Content-Type: $ctype" --data-binary "$body")
	fi
	local status
	if ! status=$(curl "${args[@]}" "$BASE$path" 2>"$ERR_FILE"); then
		fail "$name: $method $BASE$path did not answer: $(cat "$ERR_FILE")"
	fi
	if [ "$status" != "$want" ]; then
		fail "$name: $method $path answered $status, want $want:
$(head -c 2000 "$BODY_FILE")"
	fi
	say "ok  $status $method $path ($name)"
}

# expect NAME TEXT fails unless the last answer's body contains TEXT.
expect() {
	grep -qF -- "$2" "$BODY_FILE" ||
		fail "$1: the answer lacks $2:
$(head -c 2000 "$BODY_FILE")"
}

# cleanup deletes what a run made; after a failure it is best effort and
# only reports, so the first error stays the one shown.
CREATED_PROJECT=""
cleanup() {
	[ -n "$CREATED_PROJECT" ] || return 0
	local p=$CREATED_PROJECT
	CREATED_PROJECT=""
	for path in "/api/v2/flags/$p/$FLAG" "/api/v2/projects/$p"; do
		curl -sS --max-time "$CURL_MAX_TIME" -o /dev/null -X DELETE -H "Authorization: $TOKEN" "$BASE$path" ||
			say "cleanup: DELETE $path failed; delete project $p by hand"
	done
}

# run_quick_start checks one deployment at $BASE with $TOKEN.
run_quick_start() {
	local run p env=staging
	run="$(date +%s)-$RANDOM$RANDOM"
	p="smoke-$run"
	FLAG="new-checkout"
	say "quick start against $BASE (project $p)"

	request "the token is accepted" 200 GET "/api/v2/projects?limit=1"
	request "create a project" 201 POST /api/v2/projects "{\"key\": \"$p\", \"name\": \"Smoke $run\"}"
	CREATED_PROJECT=$p
	expect "create a project" "\"key\":\"$p\""
	request "create an environment" 201 POST "/api/v2/projects/$p/environments" \
		"{\"key\": \"$env\", \"name\": \"Staging\", \"color\": \"3D9970\", \"tags\": [\"ops\"]}"
	request "create a flag" 201 POST "/api/v2/flags/$p" "{\"key\": \"$FLAG\", \"name\": \"New checkout\"}"
	expect "create a flag" '"kind":"boolean"'
	request "turn the flag on (semantic patch)" 200 PATCH "/api/v2/flags/$p/$FLAG" \
		"{\"environmentKey\": \"$env\", \"comment\": \"smoke $run: on\", \"instructions\": [{\"kind\": \"turnFlagOn\"}]}" \
		'application/json; domain-model=flagplane.semanticpatch'
	request "evaluate the flag for a user" 200 POST "/api/v2/projects/$p/environments/$env/flags/evaluate" \
		'{"kind": "user", "key": "user-1"}'
	expect "evaluate the flag for a user" '"_value":true'
	expect "evaluate the flag for a user" '"kind":"FALLTHROUGH"'
	request "turn the flag off (JSON patch)" 200 PATCH "/api/v2/flags/$p/$FLAG" \
		"{\"comment\": \"smoke $run: off\", \"patch\": [{\"op\": \"replace\", \"path\": \"/environments/$env/on\", \"value\": false}]}"
	request "evaluate the flag again" 200 POST "/api/v2/projects/$p/environments/$env/flags/evaluate" \
		'{"kind": "user", "key": "user-1"}'
	expect "evaluate the flag again" '"_value":false'
	expect "evaluate the flag again" '"kind":"OFF"'
	request "read the audit log" 200 GET "/api/v2/auditlog?q=$p&limit=20"
	expect "read the audit log" "\"comment\":\"smoke $run: on\""
	expect "read the audit log" "\"comment\":\"smoke $run: off\""

	CREATED_PROJECT=""
	request "delete the flag" 204 DELETE "/api/v2/flags/$p/$FLAG"
	request "delete the project" 204 DELETE "/api/v2/projects/$p"
	request "the project is gone" 404 GET "/api/v2/projects/$p"
	say "passed against $BASE"
}

# free_port prints a 127.0.0.1 port nothing listens on now. The server may
# still lose it to another process before it binds; start_local retries.
free_port() {
	local port tries
	for tries in 1 2 3 4 5 6 7 8 9 10; do
		port=$((20000 + (RANDOM % 20000)))
		# A refused connection means nothing listens there.
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	return 1
}

# start_local starts BINARY serve with a new data file and sets BASE, TOKEN
# and SERVER_PID. Whatever answers must accept the token this server printed,
# so a different server on the port is never mistaken for it.
start_local() {
	local bin=$1 attempt port i
	for attempt in 1 2 3; do
		port=$(free_port) || fail "no free port on 127.0.0.1"
		: >"$WORK/server.out"
		"$bin" serve -addr "127.0.0.1:$port" -data "$WORK/flagplane-$attempt.db" \
			>"$WORK/server.out" 2>"$WORK/server.err" &
		SERVER_PID=$!
		BASE="http://127.0.0.1:$port"
		for i in $(seq 1 300); do # up to 30 s on a busy machine
			if ! kill -0 "$SERVER_PID" 2>/dev/null; then
				break # exited: most likely the port was taken meanwhile
			fi
			TOKEN=$(grep -oE 'api-[0-9a-f-]{36}' "$WORK/server.out" | head -n 1 || true)
			if [ -n "$TOKEN" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: $TOKEN" "$BASE/api/v2/projects?limit=1")" = 200 ]; then
				say "local server $SERVER_PID on $BASE, data $WORK/flagplane-$attempt.db"
				return 0
			fi
			sleep 0.1
		done
		stop_local
		say "the local server did not come up on port $port (attempt $attempt):"
		cat "$WORK/server.out" "$WORK/server.err" >&2
	done
	fail "could not start $bin serve"
}

SERVER_PID=""
stop_local() {
	[ -n "$SERVER_PID" ] || return 0
	kill "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=""
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/flagplane-smoke.XXXXXX")
BODY_FILE=$WORK/body
ERR_FILE=$WORK/curl.err
on_exit() {
	local code=$?
	cleanup
	stop_local
	rm -rf "$WORK"
	exit "$code"
}
trap on_exit EXIT
trap 'exit 130' INT TERM

case "${1-}" in
--local)
	[ $# -eq 2 ] || fail "usage: $0 --local BINARY"
	[ -x "$2" ] || fail "$2 is not an executable; run make build-local"
	start_local "$2"
	# Twice, as anyone may run it against their deployment: the second run
	# must not trip over the first one's keys or leftovers.
	run_quick_start
	run_quick_start
	;;
"" | -h | --help)
	sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
	[ $# -eq 1 ] || exit 2
	;;
*)
	[ $# -eq 2 ] && [ -n "$2" ] || fail "usage: $0 URL TOKEN (e.g. make smoke URL=http://127.0.0.1:8080 TOKEN=api-...)"
	BASE=${1%/}
	TOKEN=$2
	run_quick_start
	;;
esac
