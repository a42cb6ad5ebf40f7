// Package app wires the store, the domain services and the HTTP kit into
// handlers: one per resource group for the Lambda functions, and one for
// every route for the local server.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/endpoints"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/member"
	"github.com/flagplane/flagplane/shared/oauth"
	"github.com/flagplane/flagplane/shared/policy"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/role"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/dynamo"
	"github.com/flagplane/flagplane/shared/team"
	"github.com/flagplane/flagplane/shared/token"
)

// Settings are the options shared by every way of running.
type Settings struct {
	// Approvals turns the approvals feature on: approval settings are shown and patchable.
	Approvals bool
	// AccountID is stamped on audit entries; when empty the caller's token supplies it.
	AccountID string
}

// App holds the wired services.
type App struct {
	Table     store.Table
	Services  endpoints.Services
	Authn     *token.Authenticator
	Publisher audit.Publisher
	Logger    *slog.Logger
}

// New wires the services over table.
func New(table store.Table, publisher audit.Publisher, s Settings, logger *slog.Logger) *App {
	log := audit.New(table, publisher, s.AccountID, logger)
	projects := project.NewService(table, log)
	roles := role.NewService(table, log)
	members := member.NewService(table, log)
	teams := team.NewService(table, log)
	grants := grantSource{roles: roles, members: members, teams: teams}
	authn := token.NewAuthenticator(table, grants)
	return &App{
		Table: table,
		Services: endpoints.Services{
			Projects:     projects,
			Environments: environment.NewService(table, log, projects, s.Approvals),
			Audit:        log,
			Roles:        roles,
			Members:      members,
			Tokens:       token.NewService(table, log, grants, authn),
			Teams:        teams,
			OAuth:        oauth.NewService(table, log, members),
		},
		Authn:     authn,
		Publisher: publisher,
		Logger:    logger,
	}
}

// grantSource gives authentication the custom roles and members rights are built from.
type grantSource struct {
	roles   *role.Service
	members *member.Service
	teams   *team.Service
}

func (g grantSource) Roles(ctx context.Context, keys []string) ([]policy.Grant, bool, error) {
	return g.roles.Grants(ctx, keys)
}

func (g grantSource) Member(ctx context.Context, id string) (string, []string, string, error) {
	m, err := g.members.Get(ctx, id)
	if err != nil {
		return "", nil, "", err
	}
	// A member also holds the custom roles of its teams.
	fromTeams, err := g.teams.RolesOf(ctx, id)
	if err != nil {
		return "", nil, "", err
	}
	return m.Role, append(append([]string(nil), m.CustomRoles...), fromTeams...), m.Email, nil
}

// Handler routes the operations of one catalog group, or of all groups when group is "".
func (a *App) Handler(group string) (http.Handler, error) {
	ops := catalog.All()
	if group != "" {
		var err error
		if ops, err = catalog.Group(group); err != nil {
			return nil, err
		}
	}
	handlers := endpoints.Handlers(a.Services)
	routed := map[string]api.Handler{}
	for _, op := range ops {
		if h, ok := handlers[op.ID]; ok {
			routed[op.ID] = h
		}
	}
	h, err := api.NewRouter(ops, api.Routes{
		Handlers: routed, BodyActions: endpoints.BodyActions(), Authn: a.Authn, Tags: endpoints.Tagger(a.Services),
	})
	if err != nil {
		return nil, fmt.Errorf("route group %q: %w", group, err)
	}
	logger := a.Logger
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(api.WithLogger(r.Context(), logger)))
	}), nil
}

// Environment variables read by the Lambda functions (and the admin commands on AWS).
const (
	EnvTable     = "FLAGPLANE_TABLE"
	EnvApprovals = "FLAGPLANE_APPROVALS"
)

// SettingsFromEnv reads the shared settings from the environment.
func SettingsFromEnv() (Settings, error) {
	s := Settings{Approvals: true}
	if raw := os.Getenv(EnvApprovals); raw != "" {
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return Settings{}, fmt.Errorf("%s must be true or false, not %q", EnvApprovals, raw)
		}
		s.Approvals = b
	}
	return s, nil
}

// DynamoFromEnv opens the DynamoDB table named by FLAGPLANE_TABLE; the
// endpoint comes from the SDK's standard AWS_ENDPOINT_URL* settings.
func DynamoFromEnv(ctx context.Context) (store.Table, error) {
	name := os.Getenv(EnvTable)
	if name == "" {
		return nil, fmt.Errorf("%s is not set: name the DynamoDB table", EnvTable)
	}
	client, err := dynamo.NewClient(ctx)
	if err != nil {
		return nil, fmt.Errorf("dynamodb client: %w", err)
	}
	return dynamo.New(client, name, dynamo.Options{})
}

// LambdaHandler is what a group's function serves: the group's routes over
// the DynamoDB table. Outbox records are handed to no queue yet; the
// webhook issue replaces the publisher.
func LambdaHandler(ctx context.Context, group string) (http.Handler, error) {
	s, err := SettingsFromEnv()
	if err != nil {
		return nil, err
	}
	table, err := DynamoFromEnv(ctx)
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	return New(table, audit.Discard{}, s, logger).Handler(group)
}
