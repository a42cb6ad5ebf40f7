// Package localserver runs the all-in-one local server on the embedded
// store, and the admin commands of the flagplane binary.
package localserver

import (
	"context"
	"errors"
	"fmt"
	"github.com/flagplane/flagplane/shared/app"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/store/bolt"
	"github.com/flagplane/flagplane/shared/webhook"
)

// LocalConfig configures the all-in-one local server.
type LocalConfig struct {
	Addr     string // listen address, e.g. 127.0.0.1:8080
	DataFile string // the embedded store's file
	Settings app.Settings
	// Out receives the one-time admin token message.
	Out io.Writer
	// Ready, when set, receives the bound address once the server listens.
	Ready func(addr string)
	// WebhookAttempts is how many tries a webhook delivery gets; 0 means app.LocalWebhookAttempts.
	WebhookAttempts int
}

// RunLocal serves every route on the embedded store until ctx ends. On the
// first start it creates the account and an admin token and prints the
// token once.
func RunLocal(ctx context.Context, cfg LocalConfig, logger *slog.Logger) error {
	table, err := bolt.Open(cfg.DataFile)
	if err != nil {
		return err
	}
	defer table.Close()
	cfg.Settings.AllowPrivateWebhooks = true
	attempts := cfg.WebhookAttempts
	if attempts <= 0 {
		attempts = app.LocalWebhookAttempts
	}
	a, queue := app.NewWithMemoryQueue(table, cfg.Settings, logger, attempts, webhook.Backoff)
	defer queue.Close()
	acct, adminToken, err := account.Bootstrap(ctx, table, a.Publisher, logger)
	if err != nil {
		return err
	}
	if adminToken != "" {
		fmt.Fprintf(cfg.Out, "\nflagplane created an admin access token. It is shown only this once; keep it:\n\n    %s\n\n", adminToken)
	}
	a.Services.Audit.SetAccountID(acct.ID)
	go sweepOutbox(ctx, a, logger)
	go expireTargets(ctx, a, logger)
	go applyDueApprovals(ctx, a, logger)
	h, err := a.Handler("")
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	logger.Info("flagplane listening", "addr", ln.Addr().String(), "data", cfg.DataFile)
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

// sweepOutbox re-sends, every half minute, changes whose hand-off to the
// delivery queue never happened (the process stopped in between).
func sweepOutbox(ctx context.Context, a *app.App, logger *slog.Logger) {
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if n, err := a.Services.Audit.Sweep(ctx, time.Minute); err != nil {
				logger.Warn("outbox sweep failed", "error", err.Error())
			} else if n > 0 {
				logger.Info("outbox sweep re-sent changes", "count", n)
			}
		}
	}
}
