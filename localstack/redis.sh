#!/usr/bin/env bash
# Start, stop or query a Redis server for the feature store tier.
#
#   localstack/redis.sh start|stop|status
#
# The server is Debian's redis-server package, installed with apt-get when
# missing (we run as root; apt-get update first). It listens on 127.0.0.1
# only, keeps nothing on disk and has no password.
# Environment:
#   REDIS_PORT     port on 127.0.0.1 (default 6379; the make targets pick a
#                  free one per run)
#   REDIS_RUN_DIR  pid and log directory (default .run), files named per port
#   REDIS_TIMEOUT  seconds to wait for it to answer (default 20)
# start refuses a port something already listens on (exit 4), and stop
# stops only the process this script started on that port.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name=redis
port="${REDIS_PORT:-6379}"
port_setting=REDIS_PORT
run_dir="${REDIS_RUN_DIR:-$root/.run}"
timeout="${REDIS_TIMEOUT:-20}"
url="redis://127.0.0.1:$port"
# shellcheck source=localstack/emulator.sh
source "$root/localstack/emulator.sh"

# answers succeeds when a PING over the port gets +PONG.
answers() {
	local reply
	reply="$( (exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'PING\r\n' >&3 && read -r -t 2 line <&3 && echo "$line") 2>/dev/null)" || true
	[[ "$reply" == "+PONG"* ]]
}

prepare() {
	if command -v redis-server >/dev/null; then
		return 0
	fi
	command -v apt-get >/dev/null || die "redis-server not found and apt-get is missing: install Redis 6 or later"
	echo "redis: installing Debian's redis-server package"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >"$run_dir/redis-apt.log" 2>&1 || die "apt-get update failed (log $run_dir/redis-apt.log)"
	apt-get install -y -qq --no-install-recommends redis-server >>"$run_dir/redis-apt.log" 2>&1 ||
		die "apt-get install redis-server failed (log $run_dir/redis-apt.log)"
	command -v redis-server >/dev/null || die "redis-server still not found after installing it"
}

launch() {
	# The marker rides in argv[0] (exec -a); SIGHUP is ignored as nohup would.
	(trap '' HUP && exec -a "redis-server[$marker]" redis-server --bind 127.0.0.1 --port "$port" \
		--save '' --appendonly no --protected-mode yes --daemonize no --dir "$run_dir" \
		</dev/null >"$log_file" 2>&1) &
	launched_pid=$!
}

emulator_main "$@"
