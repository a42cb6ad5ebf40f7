// Package e2e is the end-to-end tier: the real `bootstrap` binary of every
// resource group, built for this machine, runs under the Lambda Runtime API
// harness of package lambdaemu behind its API Gateway front, against
// DynamoDB Local and goaws (SQS), and the tests drive the API over HTTP as a
// client would.
//
// The tests skip unless FLAGPLANE_E2E=1; then nothing may be missing:
//
//	FLAGPLANE_DYNAMODB_ENDPOINT  DynamoDB Local, http://127.0.0.1:<port>
//	FLAGPLANE_SQS_ENDPOINT       goaws, http://127.0.0.1:<port>
//	FLAGPLANE_E2E_BOOTSTRAPS     a directory holding <group>/bootstrap for every catalog group
//
// `make test-e2e` builds the binaries, starts both emulators, runs this
// package and stops everything again; `make bench-e2e` runs the benchmark.
// Each run makes its own table and queues (timestamped names) and removes
// them at the end.
package e2e
