// Command flagplane is the local all-in-one server (every route, embedded
// store) and the admin commands.
//
//	flagplane serve  [-addr 127.0.0.1:8080] [-data flagplane.db] [-approvals=true] [-webhook-attempts 5]
//	flagplane token create -name NAME [-role admin] [-data flagplane.db | -dynamo]
//	flagplane table create -name NAME   (DynamoDB, endpoint from AWS_ENDPOINT_URL*)
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/localserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "flagplane:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	switch cmd {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		addr := fs.String("addr", envOr("FLAGPLANE_ADDR", "127.0.0.1:8080"), "listen address")
		data := fs.String("data", envOr("FLAGPLANE_DATA", "flagplane.db"), "embedded store file")
		approvals := fs.Bool("approvals", envOr(app.EnvApprovals, "true") == "true", "approvals feature")
		attempts := fs.Int("webhook-attempts", app.LocalWebhookAttempts, "tries of one webhook delivery before its dead letter")
		if err := fs.Parse(args); err != nil {
			return err
		}
		return localserver.RunLocal(ctx, localserver.LocalConfig{Addr: *addr, DataFile: *data, Out: os.Stdout,
			Settings: app.Settings{Approvals: *approvals}, WebhookAttempts: *attempts}, logger)
	case "token":
		return localserver.TokenCommand(ctx, args, os.Stdout, logger)
	case "table":
		return localserver.TableCommand(ctx, args, os.Stdout)
	default:
		return fmt.Errorf("unknown command %q; use serve, token or table", cmd)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
