#!/usr/bin/env bash
# Run a command with OpenFeature's Node server SDK and OFREP provider ready:
#
#   localstack/with-ofrep.sh -- command [args...]
#
# The npm packages (@openfeature/server-sdk and @openfeature/ofrep-provider)
# are pinned in localstack/ofrep/package.json and its lockfile, installed
# with npm ci into localstack/ofrep/node_modules (git-ignored) when they are
# not the lockfile's. The command sees FLAGPLANE_OFREP_NODE (the directory
# holding evaluate.mjs) and FLAGPLANE_REQUIRE_OFREP=1, so its tests fail
# rather than skip. Anything missing fails the run: nothing skips.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pkg="$here/ofrep"

die() {
	echo "with-ofrep: $*" >&2
	exit 1
}

(($# >= 2)) && [[ "$1" == -- ]] || die "usage: $0 -- command [args...]"
shift

command -v node >/dev/null || die "node not found (Node.js 18 or newer runs OpenFeature's server SDK)"
command -v npm >/dev/null || die "npm not found"

# npm ci only when node_modules was not installed from this very lockfile
# (a stamp holding the lockfile's checksum is written after a good install).
lock_sum="$(cksum <"$pkg/package-lock.json")"
if [[ "$(cat "$pkg/node_modules/.flagplane-lock" 2>/dev/null)" != "$lock_sum" ]]; then
	echo "with-ofrep: npm ci in $pkg" >&2
	(cd "$pkg" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci in $pkg failed"
	echo "$lock_sum" >"$pkg/node_modules/.flagplane-lock"
fi

export FLAGPLANE_OFREP_NODE="$pkg"
export FLAGPLANE_REQUIRE_OFREP=1
exec "$@"
