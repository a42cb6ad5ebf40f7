// This folder holds npm packages (Unleash for the flag-imports tier), not Go code:
// a module of its own keeps `go build ./...` and `go vet ./...` out of node_modules,
// some of whose packages ship Go files.
module flagplane.invalid/unleash-npm

go 1.24
