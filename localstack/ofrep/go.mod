// This folder holds npm packages (OpenFeature's Node SDK and OFREP provider for the OFREP tier),
// not Go code: a module of its own keeps `go build ./...` and `go vet ./...` out of node_modules.
module flagplane.invalid/ofrep-npm

go 1.24
