#!/usr/bin/env bash
# Run a command with headless Chromium and the browser tier's bundles ready:
#
#   localstack/with-browser.sh -- command [args...]
#
# Chromium is Debian's chromium package (localstack/chromium.sh installs it
# with apt-get when missing). The npm packages the pages load are pinned in
# localstack/browser/package.json and its lockfile, installed with npm ci
# into localstack/browser/node_modules (git-ignored) when they are not the
# lockfile's, and each localstack/browser/src/NAME.js is bundled with the
# pinned esbuild into localstack/browser/dist/NAME.js (git-ignored), which
# a page loads as a plain script. The command sees FLAGPLANE_CHROMIUM,
# FLAGPLANE_BROWSER_BUNDLES (the dist directory) and
# FLAGPLANE_REQUIRE_BROWSER=1, so its tests fail rather than skip. Anything
# missing fails the run: nothing skips.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pkg="$here/browser"

die() {
	echo "with-browser: $*" >&2
	exit 1
}

(($# >= 2)) && [[ "$1" == -- ]] || die "usage: $0 -- command [args...]"
shift

chromium="$("$here/chromium.sh")" || die "Chromium is not available (see above)"
command -v node >/dev/null || die "node not found (Node.js 18 or newer bundles the pages' packages)"
command -v npm >/dev/null || die "npm not found"

# npm ci only when node_modules was not installed from this very lockfile
# (a stamp holding the lockfile's checksum is written after a good install).
lock_sum="$(cksum <"$pkg/package-lock.json")"
if [[ "$(cat "$pkg/node_modules/.flagplane-lock" 2>/dev/null)" != "$lock_sum" ]]; then
	echo "with-browser: npm ci in $pkg" >&2
	(cd "$pkg" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci in $pkg failed"
	echo "$lock_sum" >"$pkg/node_modules/.flagplane-lock"
fi

# Every entry is bundled again on every run: it takes milliseconds, and a
# stale bundle can never be tested.
mkdir -p "$pkg/dist"
entries=("$pkg"/src/*.js)
[[ -e "${entries[0]}" ]] || die "no entry in $pkg/src"
for entry in "${entries[@]}"; do
	out="$pkg/dist/$(basename "$entry")"
	"$pkg/node_modules/.bin/esbuild" "$entry" --bundle --format=iife --target=es2020 \
		--log-level=warning --outfile="$out" || die "esbuild could not bundle $entry"
done

export FLAGPLANE_CHROMIUM="$chromium"
export FLAGPLANE_BROWSER_BUNDLES="$pkg/dist"
export FLAGPLANE_REQUIRE_BROWSER=1
exec "$@"
