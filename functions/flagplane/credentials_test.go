package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/account"
	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/environment"
	"github.com/flagplane/flagplane/shared/environment/credtest"
	"github.com/flagplane/flagplane/shared/project"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

// oldDataFile writes a data file with one project whose two environments
// lack their credential items, as one written before the credential index.
func oldDataFile(tb testing.TB, path string) []credtest.Env {
	tb.Helper()
	ctx := context.Background()
	table, err := bolt.Open(path)
	if err != nil {
		tb.Fatalf("open data file: %v", err)
	}
	defer table.Close()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	acct, _, err := account.Bootstrap(ctx, table, audit.Discard{}, logger)
	if err != nil {
		tb.Fatalf("set up the account: %v", err)
	}
	key, name := "old", "Old"
	if _, _, err := project.NewService(table, audit.New(table, audit.Discard{}, acct.ID, logger, time.Now), time.Now).Create(ctx, project.Input{Key: &key, Name: &name}); err != nil {
		tb.Fatalf("create project: %v", err)
	}
	return credtest.Drop(tb, table)
}

func TestCredentialsCommand(t *testing.T) {
	t.Setenv("FLAGPLANE_TABLE", "") // the commands below must not find a table by chance
	tests := []struct {
		name   string
		args   []string
		old    bool // run in a folder holding old.db, made before the credential index
		code   int
		stdout []string
		stderr []string
	}{
		{name: "credentials -h prints the credentials usage and exits 0", args: []string{"credentials", "-h"}, code: 0,
			stdout: []string{"flagplane credentials backfill [-data FILE | -dynamo -table NAME]"}},
		{name: "credentials backfill -h prints its flags and exits 0", args: []string{"credentials", "backfill", "-h"}, code: 0,
			stdout: []string{"-data", "-dynamo", "-table"}},
		{name: "credentials without backfill prints the usage and exits 2", args: []string{"credentials"}, code: 2,
			stderr: []string{"flagplane credentials backfill"}},
		{name: "the overview names the credentials command", args: []string{"help"}, code: 0,
			stdout: []string{"flagplane credentials backfill"}},
		{name: "-dynamo without a table is refused with exit 2", args: []string{"credentials", "backfill", "-dynamo"}, code: 2,
			stderr: []string{"-dynamo needs -table NAME"}},
		{name: "a data file that does not exist is named, not created, with exit 1", args: []string{"credentials", "backfill", "-data", "none.db"}, code: 1,
			stderr: []string{"none.db"}},
		{name: "a data file made before the credential index gets its six items", args: []string{"credentials", "backfill", "-data", "old.db"}, old: true, code: 0,
			stdout: []string{"wrote 6 missing credential items"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var envs []credtest.Env
			if tt.old {
				envs = oldDataFile(t, filepath.Join(dir, "old.db"))
			}
			res := runCLI(t, dir, tt.args...)
			if res.code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", res.code, tt.code, res.stdout, res.stderr)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(res.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
				}
			}
			for _, want := range tt.stderr {
				if !strings.Contains(res.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, res.stderr)
				}
			}
			if !tt.old {
				if entries, _ := os.ReadDir(dir); len(entries) > 0 {
					t.Errorf("the command left %s in its folder", entries[0].Name())
				}
				return
			}
			if again := runCLI(t, dir, tt.args...); again.code != 0 || !strings.Contains(again.stdout, "wrote 0 missing credential items") {
				t.Errorf("the second run: exit %d, stdout %q, want 0 items written", again.code, again.stdout)
			}
			table, err := bolt.Open(filepath.Join(dir, "old.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer table.Close()
			svc := environment.NewService(table, nil, nil, false, time.Now)
			for _, e := range envs {
				if _, err := svc.ByCredential(t.Context(), environment.ServerCredential, e.SDKKey); err != nil {
					t.Errorf("%s/%s: the SDK key does not open it: %v", e.ProjectKey, e.Key, err)
				}
			}
		})
	}
}
