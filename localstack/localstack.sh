#!/usr/bin/env bash
# Run flagplane's CDK stack in LocalStack (Docker needed).
#
#   localstack/localstack.sh up       start LocalStack, wait until healthy
#   localstack/localstack.sh deploy   cdklocal bootstrap + deploy (run `make build` first)
#   localstack/localstack.sh status   LocalStack's service health
#   localstack/localstack.sh down     stop and remove the container
#
# The container name and edge port are fixed (docker-compose.yml), so up
# refuses a port 4566 that something else holds and a container another
# checkout started; deploy and down act only on this checkout's container.
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
# The container and the edge port docker-compose.yml names; the id of the
# container this checkout started is kept in the state file.
container=flagplane-localstack
edge_port=4566
state_file="$root/.run/localstack.id"

die() {
	echo "localstack: $*" >&2
	exit 1
}

# need_docker checks that Docker, its Compose v2 plugin and an engine are
# there, so each missing piece is named.
need_docker() {
	command -v docker >/dev/null || die "docker is not installed"
	docker compose version >/dev/null 2>&1 || die "the Docker Compose v2 plugin (docker compose) is not installed"
	docker info >/dev/null 2>&1 || die "no Docker engine answers (is the daemon running?)"
}

# compose runs Docker Compose v2 on our file.
compose() {
	need_docker
	docker compose -f "$compose_file" "$@"
}

# container_id prints the id of the LocalStack container (running or not),
# or nothing when there is none.
container_id() {
	docker inspect -f '{{.Id}}' "$container" 2>/dev/null || true
}

# owner prints the checkout whose compose file made container $1: the
# container name is fixed, so two checkouts would otherwise start, deploy
# into and remove each other's LocalStack.
owner() {
	local dir
	dir="$(docker inspect -f '{{ index .Config.Labels "com.docker.compose.project.working_dir" }}' "$1" 2>/dev/null || true)"
	echo "${dir%/localstack}"
}

# port_in_use succeeds when something accepts connections on
# 127.0.0.1:$1 (bash's /dev/tcp, the same on GNU and BSD systems).
port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# ensure_ours fails unless the LocalStack at the default endpoint is the
# container this checkout started, and running.
ensure_ours() {
	[[ "$endpoint" == "http://127.0.0.1:$edge_port" ]] || return 0 # an endpoint of your choosing
	need_docker
	local id
	id="$(container_id)"
	[[ -n "$id" ]] || die "no $container container; run make localstack-up (port $edge_port answers someone else's server)"
	[[ "$(owner "$id")" == "$root" ]] ||
		die "$container was started from the checkout at $(owner "$id"), not this one; use it from there"
	[[ "$(docker inspect -f '{{.State.Running}}' "$id")" == true ]] || die "$container is not running; run make localstack-up"
}

health() {
	curl -fsS --max-time 5 "$endpoint/_localstack/health"
}

# offered reports whether LocalStack offers a service (as its health shows).
offered() {
	grep -Eq "\"$1\": ?\"(available|running)\"" <<<"$(health)"
}

up() {
	need_docker
	local id
	id="$(container_id)"
	if [[ -n "$id" && "$(owner "$id")" != "$root" ]]; then
		die "$container was started from the checkout at $(owner "$id"); stop it there (make localstack-down) first"
	fi
	if [[ -z "$id" || "$(docker inspect -f '{{.State.Running}}' "$id")" != true ]] && port_in_use "$edge_port"; then
		die "port $edge_port on 127.0.0.1 is in use by another process; stop it first"
	fi
	compose up -d
	id="$(container_id)"
	[[ -n "$id" ]] || die "compose up made no $container container"
	mkdir -p "$(dirname "$state_file")"
	echo "$id" >"$state_file"
	echo "localstack: waiting up to ${timeout}s for $endpoint (ready hooks included)"
	local deadline=$((SECONDS + timeout))
	until curl -fsS --max-time 5 "$endpoint/_localstack/init/ready" 2>/dev/null | grep -Eq '"completed": ?true'; do
		if ((SECONDS >= deadline)); then
			compose logs --tail 50 localstack >&2 || true
			die "not ready after ${timeout}s; see the logs above"
		fi
		sleep 2
	done
	# What answers must be this container: it publishes the edge port.
	docker port "$id" "$edge_port/tcp" 2>/dev/null | grep -q "127.0.0.1:$edge_port" ||
		die "$container (${id:0:12}) does not publish 127.0.0.1:$edge_port; something else answers there"
	# The ready hooks fail loudly when a service is missing; show their verdict.
	compose logs localstack 2>/dev/null | grep 'flagplane:' || true
	echo "localstack: ready at $endpoint (container ${id:0:12})"
}

# down removes the container only when this checkout started it.
down() {
	need_docker
	local id
	id="$(container_id)"
	if [[ -n "$id" && "$(owner "$id")" != "$root" ]]; then
		die "$container was started from the checkout at $(owner "$id"); left alone (run make localstack-down there)"
	fi
	compose down --remove-orphans
	rm -f "$state_file"
}

deploy() {
	[[ -x "$root/node_modules/.bin/cdklocal" ]] || die "cdklocal missing: run npm ci in $root"
	health >/dev/null || die "LocalStack does not answer at $endpoint: run make localstack-up"
	ensure_ours

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
down) down ;;
*) die "usage: $0 up|deploy|status|down" ;;
esac
