#!/usr/bin/env bash
# Run a command beside a real Unleash server on PostgreSQL, both started for
# this run on free ports of 127.0.0.1 and stopped afterwards whatever happens:
#
#   localstack/with-unleash.sh -- command [args...]
#
# PostgreSQL comes from Debian's packages (installed with apt-get when its
# binaries are missing and this runs as root); its cluster lives in a
# temporary directory removed on exit. Unleash is the npm package
# unleash-server pinned in localstack/unleash/package.json and its lockfile,
# installed with npm ci into localstack/unleash/node_modules (git-ignored).
# Unleash starts with an admin API token of this run (INIT_ADMIN_API_TOKENS).
# The command sees FLAGPLANE_UNLEASH_URL and FLAGPLANE_UNLEASH_TOKEN, and
# FLAGPLANE_REQUIRE_UNLEASH=1 so its tests fail rather than skip. A server
# that does not start fails the run: nothing skips.
#
# Environment: UNLEASH_TIMEOUT seconds to wait for each server (default 120);
# UNLEASH_PG_FSYNC=on has PostgreSQL flush each commit to disk, as a
# production server would (default off: the tests need no durability, and
# benchmarks against a store that flushes its commits want it on).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# emulator.sh gives die, port_in_use and free_port; its per-port files go unused.
name=with-unleash port=0 run_dir=.
# shellcheck source=localstack/emulator.sh
source "$here/emulator.sh"

(($# >= 2)) && [[ "$1" == -- ]] || die "usage: $0 -- command [args...]"
shift
timeout="${UNLEASH_TIMEOUT:-120}"
pg_fsync="${UNLEASH_PG_FSYNC:-off}"
[[ "$pg_fsync" == on || "$pg_fsync" == off ]] || die "UNLEASH_PG_FSYNC is on or off, not $pg_fsync"
pkg="$here/unleash"

# pg_bin prints the directory of Debian's PostgreSQL binaries, the newest
# major version installed.
pg_bin() {
	local d
	d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
	[[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" ]] || return 1
	echo "$d"
}

if ! pg_bin >/dev/null; then
	[[ "$(id -u)" == 0 ]] || die "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin; install Debian's postgresql package (apt-get install postgresql)"
	command -v apt-get >/dev/null || die "PostgreSQL binaries not found and apt-get is not available to install them"
	echo "with-unleash: installing PostgreSQL from Debian's packages" >&2
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >&2
	pg_bin >/dev/null || die "apt-get installed postgresql but no initdb/pg_ctl under /usr/lib/postgresql/*/bin"
	# The package may start a default cluster; only the binaries are wanted here.
	if command -v pg_lsclusters >/dev/null; then
		pg_lsclusters -h 2>/dev/null | while read -r ver cluster _; do
			pg_ctlcluster "$ver" "$cluster" stop >/dev/null 2>&1 || true
		done
	fi
fi
pgbin="$(pg_bin)"
command -v node >/dev/null || die "node not found (Node.js 20 or newer is needed for unleash-server)"
command -v npm >/dev/null || die "npm not found"
command -v curl >/dev/null || die "curl not found"

# npm ci only when node_modules was not installed from this very lockfile
# (a stamp holding the lockfile's checksum is written after a good install).
lock_sum="$(cksum <"$pkg/package-lock.json")"
if [[ "$(cat "$pkg/node_modules/.flagplane-lock" 2>/dev/null)" != "$lock_sum" ]]; then
	echo "with-unleash: npm ci in $pkg" >&2
	(cd "$pkg" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci of unleash-server failed"
	echo "$lock_sum" >"$pkg/node_modules/.flagplane-lock"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/flagplane-unleash.XXXXXX")"
pg_pid="" unleash_pid="" watcher=""
# As root, PostgreSQL runs as the postgres user (initdb refuses root).
as_pg=()
if [[ "$(id -u)" == 0 ]]; then
	getent passwd postgres >/dev/null || die "running as root needs the postgres user that Debian's package creates"
	as_pg=(runuser -u postgres --)
	chown postgres "$work"
fi

cleanup() {
	[[ -z "$watcher" ]] || kill "$watcher" 2>/dev/null || true
	if [[ -n "$unleash_pid" ]]; then terminate "$unleash_pid"; fi
	if [[ -n "$pg_pid" ]]; then
		"${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m immediate -w stop >/dev/null 2>&1 || terminate "$pg_pid"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The watcher stops both servers when this script dies without running its
# traps (kill -9): a run never leaves servers behind.
parent=$$
(
	while kill -0 "$parent" 2>/dev/null; do sleep 1; done
	[[ -f "$work/unleash.pid" ]] && kill "$(cat "$work/unleash.pid")" 2>/dev/null
	"${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop
	rm -rf "$work"
) </dev/null >/dev/null 2>&1 &
watcher=$!

# PostgreSQL: a fresh cluster, trusting only local connections, listening
# on 127.0.0.1 alone (and a socket in the work directory, not /var/run).
"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg" -U unleash --auth=trust --encoding=UTF8 --no-sync >"$work/initdb.log" 2>&1 ||
	{ cat "$work/initdb.log" >&2; die "initdb failed"; }
for try in 1 2 3 4 5; do
	pg_port="$(free_port)"
	if "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -l "$work/postgres.log" -w -t "$timeout" \
		-o "-c listen_addresses=127.0.0.1 -p $pg_port -k $work -c fsync=$pg_fsync" start >/dev/null; then
		pg_pid="$(head -n 1 "$work/pg/postmaster.pid")"
		break
	fi
	grep -qi 'address already in use' "$work/postgres.log" || { tail -n 30 "$work/postgres.log" >&2; die "PostgreSQL did not start"; }
done
[[ -n "$pg_pid" ]] || die "PostgreSQL found no free port"
"${as_pg[@]}" "$pgbin/createdb" -h 127.0.0.1 -p "$pg_port" -U unleash unleash || die "createdb failed"
echo "with-unleash: PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$pg_port (fsync $pg_fsync)" >&2

# Unleash: the token is new every run, so nothing outside this run knows it.
token="*:*.flagplane-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
for try in 1 2 3 4 5; do
	unleash_port="$(free_port)"
	(
		cd "$pkg"
		export DATABASE_URL="postgres://unleash@127.0.0.1:$pg_port/unleash" DATABASE_SSL=false
		export HTTP_PORT="$unleash_port" HTTP_HOST=127.0.0.1 INIT_ADMIN_API_TOKENS="$token"
		export LOG_LEVEL=warn UNLEASH_TELEMETRY_DISABLED=true CHECK_VERSION=false SEND_TELEMETRY=false
		exec node -e "require('unleash-server').start()"
	) >"$work/unleash.log" 2>&1 &
	unleash_pid=$!
	echo "$unleash_pid" >"$work/unleash.pid"
	began=$SECONDS
	until curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$unleash_port/health" 2>/dev/null; do
		kill -0 "$unleash_pid" 2>/dev/null || break
		if ((SECONDS - began >= timeout)); then
			tail -n 30 "$work/unleash.log" >&2
			die "Unleash did not answer on 127.0.0.1:$unleash_port within ${timeout}s"
		fi
		sleep 0.5
	done
	kill -0 "$unleash_pid" 2>/dev/null && break
	if ! grep -qi 'EADDRINUSE' "$work/unleash.log"; then
		tail -n 30 "$work/unleash.log" >&2
		die "Unleash exited before answering"
	fi
	unleash_pid=""
done
[[ -n "$unleash_pid" ]] || die "Unleash found no free port"
version="$(node -p "require('$pkg/node_modules/unleash-server/package.json').version")"
echo "with-unleash: Unleash $version on 127.0.0.1:$unleash_port (up in $((SECONDS - began))s)" >&2

rc=0
FLAGPLANE_UNLEASH_URL="http://127.0.0.1:$unleash_port" FLAGPLANE_UNLEASH_TOKEN="$token" FLAGPLANE_REQUIRE_UNLEASH=1 "$@" || rc=$?
exit "$rc"
