#!/usr/bin/env bash
# Run flagplane's CDK stack in LocalStack (Docker needed).
#
#   localstack/localstack.sh up       start LocalStack, wait until healthy
#   localstack/localstack.sh deploy   cdklocal bootstrap + deploy (run `make build` first)
#   localstack/localstack.sh status   LocalStack's service health
#   localstack/localstack.sh down     stop and remove the container
#
# Environment:
#   LOCALSTACK_ENDPOINT    edge endpoint (default http://127.0.0.1:4566)
#   LOCALSTACK_TIMEOUT     seconds `up` waits for health (default 180)
#   LOCALSTACK_IMAGE, LOCALSTACK_AUTH_TOKEN   see docker-compose.yml
#   FLAGPLANE_HTTP_API     true|false: deploy the HTTP API (default: whether
#                          LocalStack offers API Gateway v2)
#   AWS_REGION             region to deploy to (default us-east-1)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
compose_file="$root/localstack/docker-compose.yml"
endpoint="${LOCALSTACK_ENDPOINT:-http://127.0.0.1:4566}"
timeout="${LOCALSTACK_TIMEOUT:-180}"
region="${AWS_REGION:-us-east-1}"
# LocalStack's fixed account id.
account=000000000000
outputs="$root/cdk.out/localstack-outputs.json"

die() {
	echo "localstack: $*" >&2
	exit 1
}

# compose runs Docker Compose v2 on our file, after checking that it exists
# and that a Docker engine answers, so each missing piece is named.
compose() {
	command -v docker >/dev/null || die "docker is not installed"
	docker compose version >/dev/null 2>&1 || die "the Docker Compose v2 plugin (docker compose) is not installed"
	docker info >/dev/null 2>&1 || die "no Docker engine answers (is the daemon running?)"
	docker compose -f "$compose_file" "$@"
}

health() {
	curl -fsS --max-time 5 "$endpoint/_localstack/health"
}

# offered reports whether LocalStack offers a service (as its health shows).
offered() {
	grep -Eq "\"$1\": ?\"(available|running)\"" <<<"$(health)"
}

up() {
	compose up -d
	echo "localstack: waiting up to ${timeout}s for $endpoint (ready hooks included)"
	local deadline=$((SECONDS + timeout))
	until curl -fsS --max-time 5 "$endpoint/_localstack/init/ready" 2>/dev/null | grep -Eq '"completed": ?true'; do
		if ((SECONDS >= deadline)); then
			compose logs --tail 50 localstack >&2 || true
			die "not ready after ${timeout}s; see the logs above"
		fi
		sleep 2
	done
	# The ready hooks fail loudly when a service is missing; show their verdict.
	compose logs localstack 2>/dev/null | grep 'flagplane:' || true
	echo "localstack: ready at $endpoint"
}

deploy() {
	[[ -x "$root/node_modules/.bin/cdklocal" ]] || die "cdklocal missing: run npm ci in $root"
	health >/dev/null || die "LocalStack does not answer at $endpoint: run make localstack-up"

	local http_api="${FLAGPLANE_HTTP_API:-}"
	if [[ -z "$http_api" ]]; then
		if offered apigatewayv2; then http_api=true; else http_api=false; fi
	fi
	[[ "$http_api" == true ]] ||
		echo "localstack: no API Gateway v2 here; deploying without the HTTP API (invoke functions directly)"

	# cdklocal points the CDK CLI at AWS_ENDPOINT_URL; LocalStack accepts any
	# credentials. The stack is disposable here, so its table goes with it.
	export AWS_ENDPOINT_URL="$endpoint" AWS_REGION="$region" AWS_DEFAULT_REGION="$region"
	export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-test}" AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-test}"
	export CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=1
	cd "$root"
	npx --no-install cdklocal bootstrap "aws://$account/$region"
	npx --no-install cdklocal deploy --require-approval never \
		-c flagplane:httpApi="$http_api" -c flagplane:removeTableOnDelete=true \
		--outputs-file "$outputs"
	echo "localstack: deployed; outputs in ${outputs#"$root"/}"
}

case "${1:-}" in
up) up ;;
deploy) deploy ;;
status) health && echo ;;
down) compose down --remove-orphans ;;
*) die "usage: $0 up|deploy|status|down" ;;
esac
