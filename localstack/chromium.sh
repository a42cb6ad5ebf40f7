#!/usr/bin/env bash
# Make sure Debian's Chromium is installed for the browser tier, and print
# its path:
#
#   localstack/chromium.sh
#
# When /usr/bin/chromium (or FLAGPLANE_CHROMIUM) is missing, this installs
# Debian's chromium package with apt-get (apt-get update first; it must run
# as root, as make test does in CI). It fails loudly, never quietly, when
# Chromium cannot be installed or does not run: the tier must not skip.
# The apt log goes to .run/chromium-apt.log.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${FLAGPLANE_CHROMIUM:-/usr/bin/chromium}"
run_dir="$root/.run"

die() {
	echo "chromium: $*" >&2
	exit 1
}

if [[ ! -x "$bin" ]]; then
	[[ "$bin" == /usr/bin/chromium ]] || die "FLAGPLANE_CHROMIUM=$bin is not an executable"
	command -v apt-get >/dev/null || die "$bin not found and apt-get is missing: install Chromium and set FLAGPLANE_CHROMIUM"
	[[ "$(id -u)" == 0 ]] || die "$bin not found: installing Debian's chromium package needs root (apt-get install chromium)"
	mkdir -p "$run_dir"
	log="$run_dir/chromium-apt.log"
	echo "chromium: installing Debian's chromium package (log $log)" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >"$log" 2>&1 || die "apt-get update failed (log $log)"
	apt-get install -y -qq --no-install-recommends chromium fonts-liberation >>"$log" 2>&1 ||
		die "apt-get install chromium failed (log $log)"
	[[ -x "$bin" ]] || die "$bin still missing after installing Debian's chromium package"
fi
# A binary that cannot even print its version (missing libraries) fails here.
version="$("$bin" --version 2>&1)" || die "$bin --version failed: $version"
echo "chromium: $version" >&2
echo "$bin"
