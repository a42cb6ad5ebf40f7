// Command goaws runs the goaws SQS emulator (github.com/Admiral-Piett/goaws,
// pinned in go.mod) on 127.0.0.1 only. It is goaws's own main (app/cmd)
// but for the listener: that one binds 0.0.0.0, and the emulators of the
// test tiers must not be reachable from other machines. Same flags:
//
//	goaws -config <file> [-loglevel warn] [Local]
package main

import (
	"flag"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/Admiral-Piett/goaws/app/conf"
	"github.com/Admiral-Piett/goaws/app/gosqs"
	"github.com/Admiral-Piett/goaws/app/router"
	log "github.com/sirupsen/logrus"
)

func main() {
	config := flag.String("config", "", "config file location + name")
	loglevel := flag.String("loglevel", "info", "log level")
	flag.Parse()

	log.SetFormatter(&log.JSONFormatter{})
	log.SetOutput(os.Stdout)
	if level, err := log.ParseLevel(*loglevel); err == nil {
		log.SetLevel(level)
	}
	env := "Local"
	if flag.NArg() > 0 {
		env = flag.Arg(0)
	}

	ports := conf.LoadYamlConfig(*config, env)
	if len(ports) != 1 {
		log.Fatalf("one port expected in %s (SQS only), got %v", *config, ports)
	}
	go gosqs.PeriodicTasks(time.Second, make(chan bool))
	addr := net.JoinHostPort("127.0.0.1", ports[0])
	log.Warnf("GoAws listening on: %s", addr)
	log.Fatal(http.ListenAndServe(addr, router.New()))
}
