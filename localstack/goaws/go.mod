// The tools module that pins goaws, the SQS emulator of the end-to-end
// tier. goaws's main package is app/cmd, which `go install pkg@version`
// cannot fetch through the module proxy, so it is built from here:
//
//	cd localstack/goaws && go build -o <bin> github.com/Admiral-Piett/goaws/app/cmd
//
// (localstack/goaws.sh does that). The tool directive makes the main
// package, and with it every dependency, part of this module's graph, so
// go.sum covers the build and it works offline from the module cache.
module flagplane.local/goaws-tool

go 1.26

tool github.com/Admiral-Piett/goaws/app/cmd

require (
	github.com/Admiral-Piett/goaws v0.5.4 // indirect
	github.com/ghodss/yaml v1.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/gorilla/mux v1.8.0 // indirect
	github.com/gorilla/schema v1.4.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/sirupsen/logrus v1.9.0 // indirect
	golang.org/x/sys v0.13.0 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
)
