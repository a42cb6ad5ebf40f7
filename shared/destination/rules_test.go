package destination

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/bolt"
)

func TestSealerBindsEachKeyToItsFingerprintAndSecret(t *testing.T) {
	s, err := NewSealer(strings.Repeat("a", MinSecretLength))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := s.Seal([]byte("private key"), "fp1")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSealer(strings.Repeat("b", MinSecretLength))
	cases := []struct {
		name   string
		sealer *Sealer
		fp     string
		opens  bool
	}{
		{"the same secret and fingerprint open it", s, "fp1", true},
		{"another fingerprint does not: a sealed key copied to another item stays shut", s, "fp2", false},
		{"another secret does not", other, "fp1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plain, err := c.sealer.Open(sealed, c.fp)
			if (err == nil) != c.opens || c.opens && string(plain) != "private key" {
				t.Errorf("open: %q %v", plain, err)
			}
		})
	}
	t.Run("a short secret is refused", func(t *testing.T) {
		if _, err := NewSealer("short"); err == nil {
			t.Error("a 5-character secret was taken")
		}
	})
	t.Run("sealing twice gives two ciphertexts (fresh nonces)", func(t *testing.T) {
		again, _ := s.Seal([]byte("private key"), "fp1")
		if bytes.Equal(again, sealed) {
			t.Error("the same ciphertext twice")
		}
	})
}

func TestLiteralsCannotLeaveTheirQuotes(t *testing.T) {
	cases := []struct{ kind, in, want string }{
		{KindSnowflake, "it's", "'it''s'"},
		{KindRedshift, "a'; DROP TABLE x; --", "'a''; DROP TABLE x; --'"},
		{KindBigQuery, `a\'b`, `'a\\\'b'`},
		{KindClickHouse, `pw'\`, `'pw\'\\'`},
	}
	for _, c := range cases {
		t.Run(c.kind+" quotes "+c.in, func(t *testing.T) {
			if got := literal(c.kind, c.in); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestConfigFieldsAreCheckedByKind(t *testing.T) {
	cases := []struct {
		name string
		kind string
		cfg  Config
		ok   bool
	}{
		{"a complete snowflake config", KindSnowflake, Config{"snowflakeHostAddress": "ab1.snowflakecomputing.com", "publicKey": "x", "databaseName": "DB_1"}, true},
		{"a name with a space", KindSnowflake, Config{"snowflakeHostAddress": "h", "publicKey": "x", "databaseName": "DB 1"}, false},
		{"a name starting with a digit", KindRedshift, Config{"clusterIdentifier": "c", "clusterRegion": "us-east-1", "clusterAwsAccountId": "123456789012", "schemaName": "1x"}, false},
		{"an account id that is not 12 digits", KindRedshift, Config{"clusterIdentifier": "c", "clusterRegion": "us-east-1", "clusterAwsAccountId": "1234"}, false},
		{"a host with a scheme", KindDatabricks, Config{"host": "https://dbc.cloud.databricks.com"}, false},
		{"a boolean where a string goes", KindBigQuery, Config{"projectId": true}, false},
		{"a network policy asked for", KindSnowflake, Config{"snowflakeHostAddress": "h", "publicKey": "x", "includeNetworkPolicy": true}, false},
		{"a missing required field", KindClickHouse, Config{"clickHouseDatabaseName": "db"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := checkConfig(c.kind, c.cfg, "config.", true); (err == nil) != c.ok {
				t.Errorf("err %v, want ok %v", err, c.ok)
			}
		})
	}
}

func TestFolderStageReplacesABatchWrittenAgain(t *testing.T) {
	dir := t.TempDir()
	f := Folder{Dir: dir}
	name := EnvPrefix("e") + "2026-01-01/00/b.ndjson"
	for _, body := range []string{"first\n", "second\n"} {
		if err := f.Put(context.Background(), name, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil || string(got) != "second\n" {
		t.Errorf("%q %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(filepath.Join(dir, filepath.FromSlash(name))))
	if len(entries) != 1 {
		t.Errorf("%d files, want the one batch and no temporary file", len(entries))
	}
	if err := f.Put(context.Background(), "../outside", []byte("x")); err == nil {
		t.Error("a name leaving the folder was written")
	}
}

func TestConcurrentExportRunsWriteEveryEventOnce(t *testing.T) {
	ctx := context.Background()
	table, err := bolt.Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { table.Close() })
	marker, _ := json.Marshal(ingest.ExportEnv{EnvID: "env", Active: []string{"d"}})
	mk := store.DataExportEnvKey("env")
	if err := table.Put(ctx, store.Item{PK: mk.PK, SK: mk.SK, Version: 1, Data: marker}, store.Cond{}); err != nil {
		t.Fatal(err)
	}
	spool := ingest.NewSpool(table, nil, time.Now)
	const payloads, perPayload = 200, 3 // more than two batches of parts
	for i := range payloads {
		var events []string
		for j := range perPayload {
			events = append(events, fmt.Sprintf(`{"kind":"custom","key":"%d-%d"}`, i, j))
		}
		if err := spool.Export(ctx, ingest.Payload{Source: ingest.SourceServer, EnvID: "env", PayloadID: fmt.Sprint("p", i), Body: []byte("[" + strings.Join(events, ",") + "]")}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A run that loses a race reports it; the others finish the work.
			_, _ = NewExporter(table, Folder{Dir: dir}, nil, time.Now).Run(ctx)
		}()
	}
	wg.Wait()
	if r, err := NewExporter(table, Folder{Dir: dir}, nil, time.Now).Run(ctx); err != nil {
		t.Fatalf("a last run: %+v %v", r, err)
	}
	seen := map[string]int{}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(path)
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var l ingest.ExportLine
			var ev struct{ Key string }
			if json.Unmarshal(line, &l) == nil && json.Unmarshal(l.Event, &ev) == nil {
				seen[ev.Key]++
			}
		}
		return nil
	})
	if len(seen) != payloads*perPayload {
		t.Errorf("%d distinct events in the stage, want %d", len(seen), payloads*perPayload)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("event %s is in the stage %d times", k, n)
		}
	}
	left, _ := table.Query(ctx, store.Query{PK: store.DataExportSpoolPartition("env")})
	if len(left.Items) != 0 {
		t.Errorf("%d spool items or batches left", len(left.Items))
	}
	var total int64
	for _, h := range allHours(t, table) {
		total += h
	}
	if total != payloads*perPayload {
		t.Errorf("counted %d, want %d", total, payloads*perPayload)
	}
}

// allHours reads the env's counters of the current and previous hour (a
// test running across an hour boundary counts in both).
func allHours(tb testing.TB, table store.Table) []int64 {
	tb.Helper()
	var out []int64
	now := time.Now().UTC()
	for _, h := range []string{now.Add(-time.Hour).Format("2006010215"), now.Format("2006010215")} {
		n, err := Counted(context.Background(), table, h, "env")
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}
