// The tools module that pins goaws, the SQS emulator of the end-to-end
// tier, and builds it through main.go here: goaws's own main (app/cmd)
// listens on every interface, this one on 127.0.0.1 only. Built by
// localstack/goaws.sh:
//
//	cd localstack/goaws && go build -o <bin> .
//
// go.sum covers every dependency, so the build works offline from the
// module cache.
module flagplane.local/goaws-tool

go 1.26

require (
	github.com/Admiral-Piett/goaws v0.5.4
	github.com/sirupsen/logrus v1.9.0
)

require (
	github.com/ghodss/yaml v1.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/gorilla/mux v1.8.0 // indirect
	github.com/gorilla/schema v1.4.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	golang.org/x/sys v0.13.0 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
)
