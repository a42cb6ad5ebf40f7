# flagplane: `make run` starts the local server, `make test` runs every test tier.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO            ?= go
ADDR          ?= 127.0.0.1:8080
DATA          ?= flagplane.db
DYNAMODB_PORT ?= 8765
BIN           := bin
# One Lambda function per catalog group: every folder of functions/ but the local binary.
LAMBDAS       := $(filter-out flagplane,$(notdir $(wildcard functions/*)))
MAX_BOOTSTRAP_BYTES := 12000000

.PHONY: run build build-local test lint test-unit test-dynamodb check-lambdas bench clean

## run: build and start the local all-in-one server on the embedded store
run: build-local
	./$(BIN)/flagplane serve -addr $(ADDR) -data $(DATA)

build-local:
	$(GO) build -o $(BIN)/flagplane ./functions/flagplane

## build: every Lambda function as bin/lambda/<group>/bootstrap (linux/arm64)
build: $(addprefix build-,$(LAMBDAS))

build-%:
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' \
		-o $(BIN)/lambda/$*/bootstrap ./functions/$*

## test: every tier; fails (never skips) when an emulator cannot start
test: lint check-lambdas test-unit test-dynamodb

lint:
	@out=$$(gofmt -l functions shared); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test-unit:
	$(GO) test -race -count=1 ./...

# The DynamoDB tier: DynamoDB Local from npm (pinned in package.json), a fresh table per run.
test-dynamodb:
	DYNAMODB_LOCAL_PORT=$(DYNAMODB_PORT) localstack/dynamodb-local.sh start
	trap 'DYNAMODB_LOCAL_PORT=$(DYNAMODB_PORT) localstack/dynamodb-local.sh stop' EXIT; \
	FLAGPLANE_DYNAMODB_ENDPOINT=http://127.0.0.1:$(DYNAMODB_PORT) FLAGPLANE_REQUIRE_DYNAMODB=1 \
		$(GO) test -count=1 ./shared/store/dynamo/... ./shared/app/...

## check-lambdas: build every function and hold each bootstrap to the size budget
check-lambdas: build
	@for f in $(LAMBDAS); do \
		size=$$(stat -c %s $(BIN)/lambda/$$f/bootstrap); \
		awk -v f="$$f" -v s="$$size" 'BEGIN { printf "%-26s %6.2f MB\n", f, s / 1e6 }'; \
		if [ "$$size" -gt $(MAX_BOOTSTRAP_BYTES) ]; then echo "$$f bootstrap exceeds $(MAX_BOOTSTRAP_BYTES) bytes"; exit 1; fi; \
	done

## bench: the local-mode benchmarks quoted in the README
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./shared/...

clean:
	rm -rf $(BIN) .run
