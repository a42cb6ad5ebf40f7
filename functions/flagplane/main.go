// Command flagplane is the local all-in-one server (every route, embedded
// store) and the admin commands. Run it without arguments for its usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/localserver"
	"github.com/flagplane/flagplane/shared/sdkapi"
)

// Exit statuses: 2 is the usual one for a command line that was not understood.
const (
	exitOK      = 0
	exitFailed  = 1
	exitMisused = 2
)

const usage = `flagplane runs the flagplane control API on this machine, and administers its data.

Usage:
  flagplane serve [flags]                    serve every API route, with the data in one file
  flagplane relay [flags]                    serve the SDK routes with streaming over the DynamoDB table (AWS)
  flagplane token create -name NAME [flags]  make an access token on the data file or the DynamoDB table
  flagplane table create -name NAME          create the DynamoDB table as the AWS stack does
  flagplane credentials backfill [flags]     index the SDK keys of environments made before this release
  flagplane version                          print the version and VCS revision of this build (also -version)
  flagplane help                             print this text

Run "flagplane <command> -h" for the flags of a command.
Read more in the flagplane source: README.md (Quick start), docs/api.md, docs/configuration.md.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal starts an orderly stop, a second one ends the process at once.
	go func() {
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// errHelp and errMisused say that the usage was already printed, on
// request (exit 0) or after a mistake (exit 2).
var (
	errHelp    = errors.New("help requested")
	errMisused = errors.New("command line not understood")
)

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errMisused):
		return exitMisused
	default:
		fmt.Fprintln(stderr, "flagplane:", err)
		return exitFailed
	}
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		// Never a default command: a bare run must not start a server or create a data file here.
		fmt.Fprint(stderr, usage)
		return errMisused
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && rest[0] != "help" && rest[0][0] != '-' {
			return dispatch(ctx, append(rest[:1:1], "-h"), stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return errHelp
	case "serve":
		return serve(ctx, rest, stdout, stderr)
	case "relay":
		return relayCommand(ctx, rest, stdout, stderr)
	case "token":
		return tokenCommand(ctx, rest, stdout, stderr)
	case "table":
		return tableCommand(ctx, rest, stdout, stderr)
	case "credentials":
		return credentialsCommand(ctx, rest, stdout, stderr)
	case "version", "-version", "--version":
		if err := parse(newFlags("version", ""), rest, stdout, stderr); err != nil {
			return err
		}
		fmt.Fprint(stdout, readBuild().Describe())
		return nil
	default:
		fmt.Fprintf(stderr, "flagplane: unknown command %q\n\n%s", cmd, usage)
		return errMisused
	}
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "[flags]")
	addr := fs.String("addr", envOr("FLAGPLANE_ADDR", "127.0.0.1:8080"), "listen address (env FLAGPLANE_ADDR)")
	data := fs.String("data", envOr("FLAGPLANE_DATA", "flagplane.db"), "embedded store file, created when missing (env FLAGPLANE_DATA)")
	approvals := fs.Bool("approvals", envOr(app.EnvApprovals, "true") == "true", "approvals feature (env "+app.EnvApprovals+")")
	attempts := fs.Int("webhook-attempts", app.LocalWebhookAttempts, "tries of one webhook delivery before its dead letter")
	format := fs.String("log-format", "text", "log lines as text or json")
	grace := fs.Duration("shutdown-grace", localserver.DefaultShutdownGrace, "on SIGINT or SIGTERM, how long requests in flight may take to finish")
	heartbeat := fs.Duration("sdk-heartbeat", sdkapi.DefaultHeartbeat, "how often an idle SDK stream (/all) gets a heartbeat comment")
	limits, limitsErr := app.RateLimitsFromEnv()
	global := fs.Int("rate-limit-global", limits.Global, "requests per 10 seconds admitted in all, 0 for no limit (env "+app.EnvRateLimitGlobal+")")
	route := fs.Int("rate-limit-route", limits.Route, "requests per 10 seconds admitted per route, 0 for no limit (env "+app.EnvRateLimitRoute+")")
	credential := fs.Int("rate-limit-credential", limits.Credential,
		"requests per 10 seconds admitted per SDK credential (SDK key, mobile key, client-side id) and SDK or event route, 0 for no limit (env "+app.EnvRateLimitCredential+")")
	cors := fs.String("cors-origins", envOr(envCORSOrigins, api.AnyOrigin),
		"browser origins allowed to call, comma-separated (https://app.example.com), * for any, none for no CORS (env "+envCORSOrigins+")")
	var allowPrivate optionalBool
	fs.Var(&allowPrivate, "webhooks-allow-private",
		"let webhooks target loopback, private and metadata addresses; unset: only when -addr is a loopback address (env "+app.EnvAllowPrivateWebhooks+")")
	tlsCert := fs.String("tls-cert", os.Getenv(envTLSCert), "PEM certificate file: serve HTTPS (with -tls-key; env "+envTLSCert+")")
	tlsKey := fs.String("tls-key", os.Getenv(envTLSKey), "PEM private key file of -tls-cert (env "+envTLSKey+")")
	if limitsErr != nil {
		return misused(fs, stderr, limitsErr)
	}
	if raw := os.Getenv(app.EnvAllowPrivateWebhooks); raw != "" {
		if err := allowPrivate.Set(raw); err != nil {
			return misused(fs, stderr, fmt.Errorf("%s must be true or false, not %q", app.EnvAllowPrivateWebhooks, raw))
		}
	}
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	logger, err := newLogger(*format, stderr)
	if err != nil {
		return misused(fs, stderr, err)
	}
	if *grace <= 0 {
		return misused(fs, stderr, fmt.Errorf("-shutdown-grace must be positive, not %s", *grace))
	}
	if *heartbeat < time.Second {
		return misused(fs, stderr, fmt.Errorf("-sdk-heartbeat must be at least 1s, not %s", *heartbeat))
	}
	for _, l := range []struct {
		flag string
		n    int
	}{{"-rate-limit-global", *global}, {"-rate-limit-route", *route}, {"-rate-limit-credential", *credential}} {
		if l.n < 0 || l.n > api.MaxRateLimit {
			return misused(fs, stderr, fmt.Errorf("%s must be 0 (no limit) to %d, not %d", l.flag, api.MaxRateLimit, l.n))
		}
	}
	rateLimits := api.RateLimits{Global: *global, Route: *route, Credential: *credential}
	origins, err := corsOrigins(*cors)
	if err != nil {
		return misused(fs, stderr, err)
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return misused(fs, stderr, errors.New("-tls-cert and -tls-key go together: give both to serve HTTPS, or neither"))
	}
	cfg := localserver.LocalConfig{
		Addr: *addr, DataFile: *data, Out: stdout,
		Settings: app.Settings{Approvals: *approvals, RateLimits: rateLimits, CORSOrigins: origins, SDKHeartbeat: *heartbeat}, WebhookAttempts: *attempts,
		Version: readBuild().String(), ShutdownGrace: *grace, TLSCert: *tlsCert, TLSKey: *tlsKey,
	}
	if allowPrivate.set {
		cfg.AllowPrivateWebhooks = &allowPrivate.value
	}
	err = localserver.RunLocal(ctx, cfg, logger)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%w\n  another process listens on %s: stop it, or pick a free address with -addr or FLAGPLANE_ADDR (make run ADDR=127.0.0.1:9090)", err, *addr)
	}
	return err
}

// Settings only the local server has.
const (
	envCORSOrigins = "FLAGPLANE_CORS_ORIGINS"
	envTLSCert     = "FLAGPLANE_TLS_CERT"
	envTLSKey      = "FLAGPLANE_TLS_KEY"
)

// corsOrigins reads -cors-origins: a comma-separated list, * for any
// origin, none (or nothing) for no CORS.
func corsOrigins(raw string) ([]string, error) {
	if strings.TrimSpace(raw) == "none" {
		return nil, nil
	}
	var origins []string
	for _, o := range strings.Split(raw, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	if err := api.CheckCORSOrigins(origins); err != nil {
		return nil, fmt.Errorf("-cors-origins: %w", err)
	}
	return origins, nil
}

// optionalBool is a boolean flag that knows whether it was given, so that
// leaving it out can mean "decide for me".
type optionalBool struct{ set, value bool }

func (b *optionalBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.value)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.set, b.value = true, v
	return nil
}

func (b *optionalBool) IsBoolFlag() bool { return true }

const tokenUsage = `Usage:
  flagplane token create -name NAME [-role reader|writer|admin] [-data FILE | -dynamo]

Run "flagplane token create -h" for its flags.
`

func tokenCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	args, err := subcommand(args, "create", tokenUsage, stdout, stderr)
	if err != nil {
		return err
	}
	fs := newFlags("token create", "-name NAME [flags]")
	name := fs.String("name", "", "token name (required)")
	role := fs.String("role", string(identity.RoleAdmin), "reader, writer or admin")
	data := fs.String("data", envOr("FLAGPLANE_DATA", "flagplane.db"), "embedded store file (env FLAGPLANE_DATA); a running server holds it, so stop it first")
	useDynamo := fs.Bool("dynamo", false, "use the DynamoDB table named by "+app.EnvTable+" instead of -data")
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	return localserver.CreateToken(ctx, localserver.TokenConfig{
		Name: *name, Role: identity.Role(*role), DataFile: *data, Dynamo: *useDynamo,
	}, stdout, logger)
}

const tableUsage = `Usage:
  flagplane table create -name NAME

Creates the DynamoDB table on the endpoint of the standard AWS_ENDPOINT_URL* settings.
`

func tableCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	args, err := subcommand(args, "create", tableUsage, stdout, stderr)
	if err != nil {
		return err
	}
	fs := newFlags("table create", "-name NAME")
	name := fs.String("name", "", "table name (required)")
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	return localserver.CreateTable(ctx, *name, stdout)
}

const credentialsUsage = `Usage:
  flagplane credentials backfill [-data FILE | -dynamo -table NAME]

Writes the credential items that environments made before this release lack,
so their SDK keys, mobile keys and client-side ids authenticate. Safe to run
again and beside a running deployment. Run "flagplane credentials backfill -h" for its flags.
`

func credentialsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	args, err := subcommand(args, "backfill", credentialsUsage, stdout, stderr)
	if err != nil {
		return err
	}
	fs := newFlags("credentials backfill", "[-data FILE | -dynamo -table NAME]")
	data := fs.String("data", envOr("FLAGPLANE_DATA", "flagplane.db"), "embedded store file (env FLAGPLANE_DATA); a running server backfills it itself")
	useDynamo := fs.Bool("dynamo", false, "use the DynamoDB table named by -table instead of -data")
	table := fs.String("table", os.Getenv(app.EnvTable), "DynamoDB table name, with -dynamo (env "+app.EnvTable+")")
	if err := parse(fs, args, stdout, stderr); err != nil {
		return err
	}
	if *useDynamo && *table == "" {
		return misused(fs, stderr, errors.New("-dynamo needs -table NAME (or "+app.EnvTable+")"))
	}
	return localserver.BackfillCredentials(ctx, localserver.BackfillConfig{DataFile: *data, Dynamo: *useDynamo, Table: *table}, stdout)
}

// subcommand checks that args start with the one subcommand a command has
// (printing its usage for help, or to stderr when it is missing) and
// returns the arguments after it.
func subcommand(args []string, want, usage string, stdout, stderr io.Writer) ([]string, error) {
	switch {
	case len(args) > 0 && isHelp(args[0]):
		fmt.Fprint(stdout, usage)
		return nil, errHelp
	case len(args) == 0 || args[0] != want:
		fmt.Fprint(stderr, usage)
		return nil, errMisused
	}
	return args[1:], nil
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// flags is a command's flag set with the synopsis its usage shows.
type flags struct {
	*flag.FlagSet
	synopsis string
}

// newFlags makes a command's flag set; parse does the printing, so the
// flag package's own (to stderr, even for -h) is off.
func newFlags(name, synopsis string) flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return flags{fs, synopsis}
}

// parse parses a command's flags: -h prints its usage to stdout, a
// mistake prints the mistake and the usage to stderr.
func parse(fs flags, args []string, stdout, stderr io.Writer) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.usage(stdout)
		return errHelp
	case err != nil:
		return misused(fs, stderr, err)
	case fs.NArg() > 0:
		return misused(fs, stderr, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	return nil
}

func misused(fs flags, stderr io.Writer, err error) error {
	fmt.Fprintf(stderr, "flagplane %s: %v\n\n", fs.Name(), err)
	fs.usage(stderr)
	return errMisused
}

func (fs flags) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage:\n  flagplane %s %s\n", fs.Name(), fs.synopsis)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprint(w, "\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// newLogger writes log lines to w as text (easy to read in a terminal) or
// JSON (for a log collector).
func newLogger(format string, w io.Writer) (*slog.Logger, error) {
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("-log-format must be text or json, not %q", format)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
