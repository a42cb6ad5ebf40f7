package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/changefeed"
	"github.com/flagplane/flagplane/shared/relay"
	"github.com/flagplane/flagplane/shared/sdkapi"
)

// relayCommand is `flagplane relay`: the SDK routes with streaming, SDK
// events and the health check over the DynamoDB table, for a deployment
// whose API runs in Lambda.
func relayCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("relay", "[flags]")
	addr := fs.String("addr", envOr("FLAGPLANE_ADDR", "127.0.0.1:8030"), "listen address (env FLAGPLANE_ADDR); :8080 in a container")
	poll := fs.Duration("poll", changefeed.DefaultPoll, "how often the audit log is read for changes")
	resync := fs.Duration("resync", changefeed.DefaultResync, "how often every streamed environment is read again even with no change logged")
	margin := fs.Duration("margin", changefeed.DefaultMargin,
		"how far each read of the audit log reaches back: the longest commit plus the clock skew between writers")
	heartbeat := fs.Duration("sdk-heartbeat", sdkapi.DefaultHeartbeat, "how often an idle stream gets a heartbeat comment (below the load balancer's idle timeout)")
	cors := fs.String("cors-origins", envOr(envCORSOrigins, api.AnyOrigin),
		"browser origins allowed to call, comma-separated, * for any, none for no CORS (env "+envCORSOrigins+")")
	grace := fs.Duration("shutdown-grace", relay.DefaultShutdownGrace, "on SIGINT or SIGTERM, how long polling requests in flight may take to finish; streams end at once")
	format := fs.String("log-format", "json", "log lines as json (for a log collector) or text")
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	logger, err := newLogger(*format, stderr)
	if err != nil {
		return misused(fs, stderr, err)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
		min  time.Duration
	}{{"-poll", *poll, 10 * time.Millisecond}, {"-margin", *margin, time.Millisecond}, {"-sdk-heartbeat", *heartbeat, time.Second}, {"-shutdown-grace", *grace, time.Millisecond}} {
		if d.v < d.min {
			return misused(fs, stderr, fmt.Errorf("%s must be at least %s, not %s", d.flag, d.min, d.v))
		}
	}
	if *resync == 0 {
		*resync = -1 // the feed's "never"
	} else if *resync < time.Second {
		return misused(fs, stderr, fmt.Errorf("-resync must be at least 1s (or 0 for never), not %s", *resync))
	}
	origins, err := corsOrigins(*cors)
	if err != nil {
		return misused(fs, stderr, err)
	}
	if _, err := app.SettingsFromEnv(); err != nil {
		return misused(fs, stderr, err)
	}
	return relay.Run(ctx, relay.Config{
		Addr:          *addr,
		Feed:          changefeed.Options{Poll: *poll, Margin: *margin, Resync: *resync},
		Heartbeat:     *heartbeat,
		CORSOrigins:   origins,
		ShutdownGrace: *grace,
		Version:       readBuild().String(),
	}, logger)
}
