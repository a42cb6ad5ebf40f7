# shellcheck shell=bash
# What the emulator scripts (dynamodb-local.sh, goaws.sh) share: a process
# started in the background with a pid file, checked by a real request,
# stopped gently then forcibly. Sourced, not run. The sourcing script sets
# name, pid_file, url and process_marker (text its command line holds),
# and defines answers (a real request succeeds) and start.

die() {
	echo "$name: $*" >&2
	exit 1
}

# running succeeds when the pid file names a live process of ours, not a
# process that reused the pid after a crash or reboot.
running() {
	[[ -f "$pid_file" ]] || return 1
	local pid
	pid="$(cat "$pid_file")"
	[[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	local args
	if [[ -r "/proc/$pid/cmdline" ]]; then
		args="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
	elif command -v ps >/dev/null; then
		args="$(ps -p "$pid" -o args= 2>/dev/null || true)"
	else
		return 0 # cannot tell; trust the pid file
	fi
	[[ "$args" == *"$process_marker"* ]]
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

stop() {
	if [[ ! -f "$pid_file" ]]; then
		echo "$name: not running (no pid file)"
		return 0
	fi
	local pid
	pid="$(cat "$pid_file")"
	if running; then
		terminate "$pid"
		echo "$name: stopped (pid $pid)"
	else
		echo "$name: already gone (pid $pid)"
	fi
	rm -f "$pid_file"
}

status() {
	if running && answers; then
		echo "$name: running at $url (pid $(cat "$pid_file"))"
	elif running; then
		echo "$name: pid $(cat "$pid_file") alive but not answering at $url"
		return 1
	else
		echo "$name: not running"
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

# await waits until the process pid (started at SECONDS=began) answers.
# When it exits first, or gives no answer within $timeout seconds, it
# prints the log tail and exits non-zero; port_setting names the variable
# that chooses another port.
await() {
	local pid=$1 began=$2 port_setting=$3
	while ! answers; do
		if ! kill -0 "$pid" 2>/dev/null; then
			rm -f "$pid_file"
			echo "$name: exited before answering; log tail ($log_file):" >&2
			tail -n 30 "$log_file" >&2 || true
			if grep -qi 'address already in use' "$log_file"; then
				echo "$name: port $port is taken; choose another $port_setting" >&2
			fi
			exit 1
		fi
		if ((SECONDS - began >= timeout)); then
			terminate "$pid"
			rm -f "$pid_file"
			echo "$name: no answer at $url within ${timeout}s; log tail ($log_file):" >&2
			tail -n 30 "$log_file" >&2 || true
			exit 1
		fi
		sleep 0.2
	done
	echo "$name: running at $url (pid $pid, up in $((SECONDS - began))s, log $log_file)"
}
