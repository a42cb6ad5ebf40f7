# shellcheck shell=bash
# What the emulator scripts (dynamodb-local.sh, goaws.sh) share: a server
# started in the background on a port of 127.0.0.1, recorded in a pid file
# of its own port, checked by a real request and by who holds the port, and
# stopped only when it is the process this script started. Sourced, not run.
#
# The sourcing script sets name, port, port_setting (the variable that
# chooses the port), run_dir and url, and defines answers (a real request
# to $url succeeds), prepare (install, build, write config) and launch
# (start the server in the background with $marker on its command line;
# set launched_pid). It then calls emulator_main "$@".
#
# Exit codes of start: 0 up, 1 failure, 4 the port is taken (by another
# process, or another run got it first), so a caller that picked the port
# itself can pick another.

# Every run of one checkout keeps its files per port, so runs on different
# ports never touch each other's. Absolute, as servers start elsewhere.
case "$run_dir" in /*) ;; *) run_dir="$PWD/$run_dir" ;; esac
pid_file="$run_dir/$name-$port.pid"
log_file="$run_dir/$name-$port.log"

die() {
	echo "$name: $*" >&2
	exit 1
}

die_busy() {
	echo "$name: $*" >&2
	exit 4
}

# port_in_use succeeds when something accepts connections on 127.0.0.1:$1
# (a server on every interface included). bash's /dev/tcp keeps this free
# of netstat/ss/lsof, whose options differ between GNU and BSD systems.
port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# free_port prints a port nothing listens on, picked at random from
# 20000-32767: below the ephemeral ranges of Linux (32768-) and BSD/macOS
# (49152-), so outgoing connections do not take it meanwhile, and clear of
# the fixed ports people run things on (8080 of make run, 4566 of
# LocalStack). Random, so two runs picking at once rarely pick the same;
# when they do, the later start exits 4 and its caller picks again.
free_port() {
	local p i
	for ((i = 0; i < 100; i++)); do
		p=$((20000 + RANDOM % 12768))
		if ! port_in_use "$p"; then
			echo "$p"
			return 0
		fi
	done
	echo "no free port found in 20000-32767" >&2
	return 1
}

# read_pid_file sets pid and marker from the pid file (line 1 and 2).
read_pid_file() {
	pid="" marker=""
	[[ -f "$pid_file" ]] || return 1
	{ read -r pid && read -r marker; } <"$pid_file" || true
	[[ "$pid" =~ ^[0-9]+$ && -n "$marker" ]]
}

# command_line prints the command line of process $1, or fails when it
# cannot be read.
command_line() {
	if [[ -r "/proc/$1/cmdline" ]]; then
		tr '\0' ' ' <"/proc/$1/cmdline"
	elif command -v ps >/dev/null; then
		ps -p "$1" -o args= 2>/dev/null
	else
		return 1
	fi
}

# running succeeds when the pid file names a live process whose command
# line holds the marker this script gave it: a process that reused the pid
# after a crash or reboot, or any other server, is not ours.
running() {
	local pid marker args
	read_pid_file || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	args="$(command_line "$pid")" || return 0 # cannot tell; trust the pid file
	[[ "$args" == *"$marker"* ]]
}

# owns_port succeeds when process $1 holds the listening socket of $port,
# so what answers at $url is that process and not someone else's server.
# Linux: match the socket inode of /proc/net/tcp{,6} against the process's
# descriptors. Elsewhere: lsof (macOS and the BSDs ship it). With neither,
# a live process whose start did not fail is taken as the owner.
owns_port() {
	local pid=$1
	if [[ -r /proc/net/tcp && -d "/proc/$pid/fd" ]]; then
		local hex inode fd
		hex="$(printf '%04X' "$port")"
		# Fields: local address (hex ip:port), state (0A = LISTEN), inode.
		for inode in $(awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' \
			/proc/net/tcp /proc/net/tcp6 2>/dev/null); do
			for fd in "/proc/$pid/fd/"*; do
				[[ "$(readlink "$fd" 2>/dev/null)" == "socket:[$inode]" ]] && return 0
			done
		done
		return 1
	elif command -v lsof >/dev/null; then
		lsof -nP -a -p "$pid" -iTCP:"$port" -sTCP:LISTEN >/dev/null 2>&1
	else
		kill -0 "$pid" 2>/dev/null
	fi
}

# terminate stops pid, forcibly when it does not exit within 5 seconds.
terminate() {
	local pid=$1 i
	kill "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
}

# forget removes the pid file when it still names process $1: a start that
# lost the port to a concurrent one must not drop the winner's record.
forget() {
	local pid marker
	if read_pid_file && [[ "$pid" == "$1" ]]; then
		rm -f "$pid_file"
	fi
}

start() {
	[[ "$port" =~ ^[0-9]+$ ]] && ((port > 0 && port < 65536)) ||
		die "$port_setting must be a port number (1-65535), not '$port'"
	local pid marker
	if running; then
		read_pid_file
		# Sharing another run's server would let its stop pull the server
		# from under this run, so a second start never reuses it.
		die_busy "already running at $url (pid $pid, pid file $pid_file); stop it with '$0 stop' or choose another $port_setting"
	fi
	if [[ -f "$pid_file" ]]; then
		rm -f "$pid_file" # stale: its process is gone or is not ours
	fi
	if port_in_use "$port"; then
		die_busy "port $port on 127.0.0.1 is in use by another process; choose another $port_setting (unset, the make targets pick a free one)"
	fi
	command -v curl >/dev/null || die "curl not found"
	mkdir -p "$run_dir"
	prepare

	# The marker is unique to this start, so stop and status recognise this
	# very process by its command line.
	marker="flagplane-emulator=$name-$port-$$-$RANDOM$RANDOM"
	local began=$SECONDS launched_pid
	launch
	# noclobber: when two starts race for one port, one records its process
	# and the other stops its own and reports the port as taken.
	if ! (set -C && printf '%s\n%s\n' "$launched_pid" "$marker" >"$pid_file") 2>/dev/null; then
		terminate "$launched_pid"
		die_busy "another start on port $port won the race (pid file $pid_file); choose another $port_setting"
	fi
	await "$launched_pid" "$began"
}

stop() {
	local pid marker
	if ! read_pid_file; then
		rm -f "$pid_file"
		echo "$name: not running on port $port (no pid file)"
		return 0
	fi
	if running; then
		terminate "$pid"
		echo "$name: stopped (pid $pid, port $port)"
	else
		echo "$name: pid $pid of port $port is gone or is not a server this script started; nothing stopped"
	fi
	rm -f "$pid_file"
}

status() {
	local pid marker
	if running && read_pid_file && answers && owns_port "$pid"; then
		echo "$name: running at $url (pid $pid)"
	elif running; then
		echo "$name: pid $pid alive but it does not answer at $url"
		return 1
	else
		echo "$name: not running on port $port"
		return 3
	fi
}

# emulator_main dispatches the script's command.
emulator_main() {
	case "${1:-}" in
	start) start ;;
	stop) stop ;;
	status) status ;;
	*)
		echo "usage: $0 start|stop|status" >&2
		exit 2
		;;
	esac
}

# await waits until the process pid (started at SECONDS=began) answers at
# $url and holds the port. When it exits first, or does not within $timeout
# seconds, it prints the log tail and exits non-zero (4 when the log says
# the port was taken).
await() {
	local pid=$1 began=$2
	until answers && owns_port "$pid"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			forget "$pid"
			echo "$name: exited before answering; log tail ($log_file):" >&2
			tail -n 30 "$log_file" >&2 || true
			if grep -qi 'address already in use' "$log_file"; then
				die_busy "port $port is taken; choose another $port_setting"
			fi
			exit 1
		fi
		if ((SECONDS - began >= timeout)); then
			terminate "$pid"
			forget "$pid"
			echo "$name: no answer from pid $pid at $url within ${timeout}s; log tail ($log_file):" >&2
			tail -n 30 "$log_file" >&2 || true
			exit 1
		fi
		sleep 0.2
	done
	echo "$name: running at $url (pid $pid, up in $((SECONDS - began))s, log $log_file)"
}
