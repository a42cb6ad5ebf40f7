// Package relay runs `flagplane relay`: the streaming front of a deployment
// whose API runs in Lambda. It serves every route of the catalog's sdk
// group with streaming on (server-side /all, the client-side and mobile
// streams, polling, evaluations), the events group's routes (SDK events go
// to the ingest queue, as the events function sends them) and GET /healthz.
//
// A relay is stateless and only reads the table: it learns the commits of
// the Lambda functions (and of other relays' neighbours) from a change
// feed over the audit partition (package changefeed) and tells the SDK
// data service, which then reads the changed environments once and sends
// every open stream what changed. Between changes it answers from what it
// derived, as the local server does. Several replicas run behind a load
// balancer; on SIGTERM a replica stops accepting and ends its streams, so
// SDKs reconnect to another one and get the whole data set again.
package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/changefeed"
	"github.com/flagplane/flagplane/shared/health"
	"github.com/flagplane/flagplane/shared/ingest/eventapi"
	"github.com/flagplane/flagplane/shared/sdkapi"
)

// Config configures a relay.
type Config struct {
	// Addr is the listen address, e.g. :8080.
	Addr string
	// Feed tunes the change feed: its poll interval, margin and resync.
	Feed changefeed.Options
	// Heartbeat is the interval of stream heartbeats (sdkapi.DefaultHeartbeat when zero).
	Heartbeat time.Duration
	// CORSOrigins are the browser origins allowed to call ("*" for all,
	// none for no CORS): browser SDKs stream from the relay.
	CORSOrigins []string
	// ShutdownGrace is how long requests in flight may take once ctx ends
	// (DefaultShutdownGrace when zero); streams end at once.
	ShutdownGrace time.Duration
	// Version names the build in the start line.
	Version string
	// Ready, when set, receives the bound address once the relay listens.
	Ready func(addr string)
}

// DefaultShutdownGrace is the time polling requests in flight get to
// finish on shutdown: short, as a load balancer's deregistration waits.
const DefaultShutdownGrace = 5 * time.Second

// Groups are the relay's groups: the sdk and events groups, and the
// projects group's health check alone.
func Groups() []app.NewGroup {
	return []app.NewGroup{sdkapi.New, eventapi.New, healthGroup}
}

// relayGroups are the catalog groups whose every operation the relay serves.
var relayGroups = []string{"sdk", "events"}

// healthGroup is GET /healthz: whether the relay reaches the table.
func healthGroup(a *app.App) app.Group {
	return app.Group{Name: "projects", Handlers: map[string]api.Handler{health.OperationID: health.Handler(a.Table)}}
}

// Operations are the routes a relay serves: every operation of the
// catalog's sdk and events groups (so routes added to them are served
// without more wiring), and the health check.
func Operations() []catalog.Operation {
	var ops []catalog.Operation
	for _, g := range relayGroups {
		group, err := catalog.Group(g)
		if err != nil {
			panic(fmt.Sprintf("relay: %v", err))
		}
		ops = append(ops, group...)
	}
	op, ok := catalog.ByID(health.OperationID)
	if !ok {
		panic("relay: the catalog has no health check")
	}
	return append(ops, op)
}

// Settings are the relay's app settings: the functions' (from the
// environment: rate limits, approvals) with streaming on.
func Settings(cfg Config) (app.Settings, error) {
	s, err := app.SettingsFromEnv()
	if err != nil {
		return app.Settings{}, err
	}
	s.NoSDKStreaming = false
	s.SDKHeartbeat = cfg.Heartbeat
	s.CORSOrigins = cfg.CORSOrigins
	return s, nil
}

// Run serves the relay over the DynamoDB table of the environment
// (FLAGPLANE_TABLE, AWS_* settings), with SDK events sent to the ingest
// queue FLAGPLANE_INGEST_QUEUE_URL, until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	s, err := Settings(cfg)
	if err != nil {
		return err
	}
	if logger == nil {
		logger = slog.Default()
	}
	a, _, err := app.FromEnvWith(ctx, s, logger, Groups()...)
	if err != nil {
		return err
	}
	return Serve(ctx, a, cfg, logger)
}

// Serve serves a's relay routes with a change feed over a's table until
// ctx ends; a must be built with Groups (tests build it over any table).
func Serve(ctx context.Context, a *app.App, cfg Config, logger *slog.Logger) error {
	h, err := a.HandlerFor(Operations())
	if err != nil {
		return fmt.Errorf("relay routes: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer ln.Close() // for early returns; serving closes it otherwise

	// The feed tells of every commit, so what the relay derived stays
	// current until the feed says otherwise, as in a sole writer.
	a.SDK.SetSoleWriter(true)
	fo := cfg.Feed
	fo.Logger = logger
	feed := changefeed.New(changefeed.AuditLog{Table: a.Table, Shards: a.Services.Audit.Shards()}, a.SDK.Changed, fo)
	feedCtx, stopFeed := context.WithCancel(context.Background())
	feedDone := make(chan struct{})
	go func() {
		defer close(feedDone)
		feed.Run(feedCtx)
	}()
	defer func() {
		stopFeed()
		<-feedDone
	}()

	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second, // streams lift it for each write
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	// Streams outlive requests: end them when the server stops, so SDKs
	// reconnect to another replica and shutdown does not wait for them.
	srv.RegisterOnShutdown(a.SDK.Streams().Close)
	o := a.Settings()
	logger.Info("flagplane relay started", "addr", ln.Addr().String(), "version", cfg.Version,
		"poll", durationOr(fo.Poll, changefeed.DefaultPoll), "margin", durationOr(fo.Margin, changefeed.DefaultMargin),
		"resync", durationOr(fo.Resync, changefeed.DefaultResync), "heartbeat", durationOr(o.SDKHeartbeat, sdkapi.DefaultHeartbeat),
		"rateLimitGlobal", o.RateLimits.Global, "rateLimitRoute", o.RateLimits.Route, "rateLimitCredential", o.RateLimits.Credential,
		"corsOrigins", strings.Join(o.CORSOrigins, ","))
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

	grace := cfg.ShutdownGrace
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	stopping := time.Now()
	open := a.SDK.Streams().Open()
	logger.Info("flagplane relay stopping: no new connections, streams end", "streams", open, "grace", grace.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
		logger.Warn("flagplane relay cut off requests still running after the grace", "grace", grace.String())
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	s := feed.Stats()
	logger.Info("flagplane relay stopped", "tookMs", time.Since(stopping).Milliseconds(), "streamsEnded", open,
		"feedPolls", s.Polls, "feedFailures", s.Failures, "feedEntries", s.Entries, "feedChanges", s.Changes)
	return nil
}

func durationOr(d, def time.Duration) string {
	if d == 0 {
		d = def
	}
	if d < 0 {
		return "never"
	}
	return d.String()
}
