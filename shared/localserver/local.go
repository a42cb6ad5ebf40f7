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
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/store/bolt"
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
	publisher := audit.Discard{}
	acct, adminToken, err := account.Bootstrap(ctx, table, publisher, logger)
	if err != nil {
		return err
	}
	if adminToken != "" {
		fmt.Fprintf(cfg.Out, "\nflagplane created an admin access token. It is shown only this once; keep it:\n\n    %s\n\n", adminToken)
	}
	cfg.Settings.AccountID = acct.ID
	h, err := app.New(table, publisher, cfg.Settings, logger).Handler("")
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
