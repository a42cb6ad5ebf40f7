// Package localserver runs the all-in-one local server on the embedded
// store, and the admin commands of the flagplane binary.
package localserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/app/allgroups"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/ingest"
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
	// Version names the build in the start line.
	Version string
	// ShutdownGrace is how long requests in flight may run on once ctx
	// ends; 0 means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// AllowPrivateWebhooks, when set, decides whether webhooks may target
	// loopback, private and cloud-metadata addresses. When nil the listen
	// address decides: allowed only when the server listens on loopback
	// alone, since then only this machine can create webhooks; refused
	// otherwise, so that someone on the network cannot aim one inside it.
	// It overrides Settings.AllowPrivateWebhooks.
	AllowPrivateWebhooks *bool
	// TLSCert and TLSKey, both PEM files, serve HTTPS instead of HTTP.
	TLSCert, TLSKey string
}

// DefaultShutdownGrace is the time requests in flight get to finish on shutdown.
const DefaultShutdownGrace = 10 * time.Second

// RunLocal serves every route on the embedded store until ctx ends. On the
// first start it creates the account and an admin token and prints it
// once. When ctx ends it stops accepting, lets requests in flight finish
// (up to the grace), stops the timers, applies the SDK events it kept,
// then closes the store: a write, and an SDK event payload, is
// acknowledged only after its commit, so none acknowledged is lost, even
// to a crash (a restart applies the kept payloads).
func RunLocal(ctx context.Context, cfg LocalConfig, logger *slog.Logger) (err error) {
	tlsConfig, err := loadTLS(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return err
	}
	table, err := bolt.Open(cfg.DataFile)
	if errors.Is(err, bolt.ErrInUse) {
		return fmt.Errorf("%s is in use by another process, most likely a flagplane server already serving it: "+
			"stop that server first, or serve another file with -data: %w", cfg.DataFile, err)
	}
	if err != nil {
		return err
	}
	// For early returns; the orderly stop closes it last, and a second Close does nothing.
	defer func() {
		if cerr := table.Close(); err == nil {
			err = cerr
		}
	}()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer ln.Close() // for early returns; serving closes it otherwise
	if cfg.AllowPrivateWebhooks != nil {
		cfg.Settings.AllowPrivateWebhooks = *cfg.AllowPrivateWebhooks
	} else {
		cfg.Settings.AllowPrivateWebhooks = onLoopback(ln.Addr())
	}
	attempts := cfg.WebhookAttempts
	if attempts <= 0 {
		attempts = app.LocalWebhookAttempts
	}
	// SDK events: the handler answers 202 once the payload is kept in the
	// data file, and one worker aggregates, as the SQS worker does in AWS.
	// Payloads a previous run kept and did not apply are applied first.
	// At most 3 kept payloads wait: a kept payload's pages of the data
	// file count in the server's resident memory once the worker reads
	// them, so 16 payloads of 5 MB kept it over 100 MB.
	events, err := ingest.NewInbox(ctx, table, ingest.NewAggregator(table, logger, time.Now), 3, logger)
	if err != nil {
		return err
	}
	cfg.Settings.Ingest = events
	// The local server serves every group.
	a, queue := app.NewWithMemoryQueue(table, cfg.Settings, logger, attempts, webhook.Backoff, allgroups.List()...)
	// The inbox's worker stops before the queue its changes go to.
	defer queue.Close()
	defer events.Close()
	acct, adminToken, err := account.Bootstrap(ctx, table, a.Publisher, logger)
	if err != nil {
		return err
	}
	if adminToken != "" {
		fmt.Fprintf(cfg.Out, "\nflagplane created an admin access token. It is shown only this once; keep it:\n\n    %s\n\n", adminToken)
	}
	a.Services.Audit.SetAccountID(acct.ID)
	// Environments made before the credential index get their items, so their SDK keys open them again.
	backfilled, err := environment.BackfillCredentials(ctx, table)
	if err != nil {
		return err
	}
	if backfilled > 0 {
		logger.Info("flagplane wrote missing SDK credential items", "items", backfilled)
	}
	// This process holds the data file: flag data derived for SDKs stays
	// current until one of its own commits.
	a.SDK.SetSoleWriter(true)
	a.Services.Audit.SetSoleWriter(true)

	// The timers stop, and are waited for, before the store closes under them.
	jobsCtx, stopJobs := context.WithCancel(ctx)
	var jobs sync.WaitGroup
	defer jobs.Wait()
	defer stopJobs()
	// The registered groups' timers stand in for their scheduled functions.
	for _, job := range []func(context.Context, *app.App, *slog.Logger){sweepOutbox, expireTargets, applyDueApprovals, runGroupWorkers} {
		jobs.Add(1)
		go func() {
			defer jobs.Done()
			job(jobsCtx, a, logger)
		}()
	}

	// Every route, the console's page and files too (its catalog group).
	h, err := a.Handler("")
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	// SDK streams outlive requests: end them when the server stops, so
	// shutdown does not wait for them.
	srv.RegisterOnShutdown(a.SDK.Streams().Close)
	scheme, serve := "http", srv.Serve
	if tlsConfig != nil {
		// The certificate is in TLSConfig; plain HTTP on this port gets a 400.
		scheme, serve = "https", func(l net.Listener) error { return srv.ServeTLS(l, "", "") }
	}
	logger.Info("flagplane started", "addr", ln.Addr().String(), "data", cfg.DataFile, "version", cfg.Version,
		"url", scheme+"://"+ln.Addr().String(), "webhooksAllowPrivate", cfg.Settings.AllowPrivateWebhooks,
		"rateLimitGlobal", cfg.Settings.RateLimits.Global, "rateLimitRoute", cfg.Settings.RateLimits.Route,
		"rateLimitCredential", cfg.Settings.RateLimits.Credential,
		"corsOrigins", strings.Join(cfg.Settings.CORSOrigins, ","))
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}

	grace := cfg.ShutdownGrace
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	stopping := time.Now()
	logger.Info("flagplane stopping: no new requests, finishing those in flight", "grace", grace.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if serr := srv.Shutdown(shutdownCtx); serr != nil {
		// Past the grace: cut the connections. Their requests get no answer,
		// so none of them counts as acknowledged.
		srv.Close()
		logger.Warn("flagplane cut off requests still running after the grace", "grace", grace.String())
	}
	stopJobs()
	jobs.Wait()
	// SDK events accepted (202) before the stop are applied while the store is open.
	events.Close()
	queue.Close()
	if cerr := table.Close(); cerr != nil {
		return cerr
	}
	logger.Info("flagplane stopped", "data", cfg.DataFile, "tookMs", time.Since(stopping).Milliseconds())
	return nil
}

func runGroupWorkers(ctx context.Context, a *app.App, logger *slog.Logger) { a.RunWorkers(ctx, logger) }

// onLoopback reports whether addr is a loopback address only (127.0.0.1,
// ::1), not every interface (0.0.0.0, ::) or a network one.
func onLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// loadTLS reads the certificate and key for HTTPS: both or neither.
func loadTLS(certFile, keyFile string) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "" || keyFile == "":
		return nil, errors.New("HTTPS needs both a certificate and its key (-tls-cert and -tls-key)")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load the TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
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
