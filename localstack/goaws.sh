#!/usr/bin/env bash
# Start, stop or query goaws, the SQS emulator of the end-to-end tier.
#
#   localstack/goaws.sh start|stop|status
#
# goaws v0.5.4 is built from the pinned tools module in localstack/goaws
# (its own go.mod and go.sum, and a main.go that listens on 127.0.0.1 only
# where goaws's own binds every interface), so only Go is needed.
# Environment:
#   GOAWS_PORT     port on 127.0.0.1 (default 4100; the make targets pick a
#                  free one per run)
#   GOAWS_RUN_DIR  pid, log and config directory (default .run), files
#                  named per port
#   GOAWS_BIN      the binary, built when missing or older than the pins
#                  (default bin/goaws)
#   GOAWS_TIMEOUT  seconds to wait for it to answer (default 30)
# goaws keeps queues in memory: a restart starts empty. start refuses a
# port something already listens on (exit 4), and stop stops only the
# process this script started on that port.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name=goaws
port="${GOAWS_PORT:-4100}"
port_setting=GOAWS_PORT
run_dir="${GOAWS_RUN_DIR:-$root/.run}"
bin="${GOAWS_BIN:-$root/bin/goaws}"
timeout="${GOAWS_TIMEOUT:-30}"
tool_dir="$root/localstack/goaws"
config="$run_dir/goaws-$port.yaml"
url="http://127.0.0.1:$port"
# shellcheck source=localstack/emulator.sh
source "$root/localstack/emulator.sh"

# answers succeeds when a real SQS call (ListQueues, AWS JSON protocol as
# aws-sdk-go-v2 speaks it) gets an HTTP 200.
answers() {
	local code
	code="$(curl --silent --output /dev/null --write-out '%{http_code}' --max-time 2 \
		--request POST "$url/" \
		--header 'Content-Type: application/x-amz-json-1.0' \
		--header 'X-Amz-Target: AmazonSQS.ListQueues' \
		--data '{}' 2>/dev/null)" || true
	[[ "$code" == 200 ]]
}

# build makes the binary from the tools module when it is missing or older
# than the module's pins or main.
build() {
	if [[ -x "$bin" && "$bin" -nt "$tool_dir/go.mod" && "$bin" -nt "$tool_dir/go.sum" && "$bin" -nt "$tool_dir/main.go" ]]; then
		return 0
	fi
	command -v go >/dev/null || die "go not found"
	echo "goaws: building $bin from $tool_dir"
	mkdir -p "$(dirname "$bin")"
	# Build beside the target and rename: a concurrent run may be executing
	# the old binary or building the same one.
	local tmp="$bin.tmp.$$"
	(cd "$tool_dir" && CGO_ENABLED=0 go build -trimpath -o "$tmp" .) ||
		{ rm -f "$tmp"; die "build failed"; }
	mv -f "$tmp" "$bin"
}

# write_config writes the goaws configuration: queue URLs name 127.0.0.1,
# and no queues exist until a client creates them. Region stays unset on
# purpose: with a region goaws puts it in front of the host in queue URLs
# (http://us-east-1.127.0.0.1:...), which resolve nowhere.
write_config() {
	cat >"$config" <<EOF
Local:
  Host: 127.0.0.1
  Port: $port
  AccountId: "100010001000"
  LogToFile: false
  EnableDuplicates: false
  QueueAttributeDefaults:
    VisibilityTimeout: 30
    ReceiveMessageWaitTimeSeconds: 0
    MaximumMessageSize: 262144
  Queues: []
  Topics: []
EOF
}

prepare() {
	build
	write_config
}

launch() {
	# goaws takes no option to carry the marker, so it rides in argv[0]
	# (exec -a); SIGHUP is ignored as nohup would.
	(trap '' HUP && exec -a "goaws[$marker]" "$bin" -config "$config" -loglevel warn Local \
		</dev/null >"$log_file" 2>&1) &
	launched_pid=$!
}

emulator_main "$@"
