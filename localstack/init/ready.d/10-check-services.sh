#!/usr/bin/env bash
# LocalStack ready hook: runs inside the container once LocalStack is up,
# before the container reports healthy. It checks that every service the
# flagplane stack deploys is offered, so a missing one is reported here,
# in `docker compose logs`, rather than halfway through `cdklocal deploy`.
# API Gateway v2 (the HTTP API) is only in licensed images; without it
# `make localstack-deploy` leaves the API out, so that is a notice, not a
# failure.
set -euo pipefail

health="$(curl -fsS http://127.0.0.1:4566/_localstack/health)" || {
	echo "flagplane: cannot read LocalStack's health endpoint" >&2
	exit 1
}

offered() {
	grep -Eq "\"$1\": ?\"(available|running)\"" <<<"$health"
}

missing=()
for service in dynamodb lambda sqs events iam logs cloudformation s3 ssm sts; do
	offered "$service" || missing+=("$service")
done
if ((${#missing[@]} > 0)); then
	echo "flagplane: LocalStack lacks services the stack needs: ${missing[*]}" >&2
	echo "flagplane: check SERVICES in localstack/docker-compose.yml" >&2
	exit 1
fi

if offered apigatewayv2; then
	echo "flagplane: LocalStack offers every service the stack needs, HTTP API included"
else
	echo "flagplane: LocalStack offers every service the stack needs but API Gateway v2;"
	echo "flagplane: make localstack-deploy will leave the HTTP API out (invoke functions directly)"
fi
