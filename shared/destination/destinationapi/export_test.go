package destinationapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/destination"
	"github.com/flagplane/flagplane/shared/ingest"
	"github.com/flagplane/flagplane/shared/store"
	"github.com/flagplane/flagplane/shared/store/storetest"
)

// exportEnv is an environment with a destination, and how to send it events.
type exportEnv struct {
	srv    *apptest.Server
	id     string
	sdkKey string
}

func newExportEnv(tb testing.TB, on bool) exportEnv {
	tb.Helper()
	srv := newServer(tb)
	env := must(tb, srv.Do(tb, http.MethodGet, "/api/v2/projects/p/environments/production", nil), http.StatusOK)
	must(tb, srv.Do(tb, http.MethodPost, destPath("p", "production"), map[string]any{"kind": "databricks", "on": on,
		"config": map[string]any{"host": "dbc-1234.cloud.databricks.com"}}), http.StatusCreated)
	return exportEnv{srv: srv, id: env["_id"].(string), sdkKey: env["apiKey"].(string)}
}

// send posts n custom events as a server SDK does, under payload id pid.
func (e exportEnv) send(tb testing.TB, pid string, n int) {
	tb.Helper()
	var events []string
	for i := range n {
		events = append(events, fmt.Sprintf(`{"kind":"custom","key":"%s-%d","creationDate":%d,"contextKeys":{"user":"u%d"}}`, pid, i, time.Now().UnixMilli(), i))
	}
	res := e.srv.Do(tb, http.MethodPost, "/bulk", "["+strings.Join(events, ",")+"]", "Authorization", e.sdkKey,
		"X-LaunchDarkly-Event-Schema", "4", "X-LaunchDarkly-Payload-ID", pid, "User-Agent", "GoClient/7.14.6")
	if res.Status != http.StatusAccepted {
		tb.Fatalf("post events: %d %s", res.Status, res.Body)
	}
}

// staged reads every batch the folder stage holds: object names and the
// event keys of their lines.
func staged(tb testing.TB, dir string) (objects []string, keys []string) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") {
			tb.Errorf("a temporary file was left in the stage: %s", path)
		}
		objects = append(objects, path)
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var line ingest.ExportLine
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				tb.Fatalf("%s: line %q: %v", path, sc.Text(), err)
			}
			var ev struct{ Key string }
			_ = json.Unmarshal(line.Event, &ev)
			keys = append(keys, ev.Key)
		}
		return sc.Err()
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		tb.Fatal(err)
	}
	return objects, keys
}

// counted is the environment's data-export counter this hour.
func counted(tb testing.TB, table store.Table, envID string) int64 {
	tb.Helper()
	n, err := destination.Counted(context.Background(), table, time.Now().UTC().Format("2006010215"), envID)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// flakyStage writes each object and then fails the first fail calls:
// the worker stopped after the object landed, before closing its batch.
type flakyStage struct {
	destination.Stage
	fail int
}

func (s *flakyStage) Put(ctx context.Context, name string, body []byte) error {
	if err := s.Stage.Put(ctx, name, body); err != nil {
		return err
	}
	if s.fail > 0 {
		s.fail--
		return errors.New("worker stopped")
	}
	return nil
}

func wantKeys(pids map[string]int) []string {
	var out []string
	for pid, n := range pids {
		for i := range n {
			out = append(out, fmt.Sprintf("%s-%d", pid, i))
		}
	}
	return out
}

// sameSet reports what differs between got and want, duplicates included.
func sameSet(got, want []string) string {
	seen := map[string]int{}
	for _, k := range got {
		seen[k]++
	}
	var problems []string
	for _, k := range want {
		switch seen[k] {
		case 0:
			problems = append(problems, "lost "+k)
		case 1:
		default:
			problems = append(problems, fmt.Sprintf("%s %d times", k, seen[k]))
		}
		delete(seen, k)
	}
	for k := range seen {
		problems = append(problems, "unexpected "+k)
	}
	return strings.Join(problems, ", ")
}

func TestExportWritesEveryEventOnceToTheStage(t *testing.T) {
	t.Run("events of an environment with an active destination land as NDJSON and are counted", func(t *testing.T) {
		e := newExportEnv(t, true)
		e.send(t, "pl-a", 5)
		e.send(t, "pl-b", 3)
		e.send(t, "pl-a", 5) // an SDK's retry of the first payload
		dir := t.TempDir()
		r, err := destination.NewExporter(e.srv.Table, destination.Folder{Dir: dir}, nil, e.srv.App.Now).Run(t.Context())
		if err != nil || r.Events != 8 {
			t.Fatalf("run: %+v %v", r, err)
		}
		objects, keys := staged(t, dir)
		if problems := sameSet(keys, wantKeys(map[string]int{"pl-a": 5, "pl-b": 3})); problems != "" {
			t.Error(problems)
		}
		for _, o := range objects {
			if !strings.Contains(filepath.ToSlash(o), "/events/"+e.id+"/") || !strings.HasSuffix(o, ".ndjson") {
				t.Errorf("object %s is not under the environment's prefix", o)
			}
		}
		if n := counted(t, e.srv.Table, e.id); n != 8 {
			t.Errorf("counted %d, want 8", n)
		}
		again, err := destination.NewExporter(e.srv.Table, destination.Folder{Dir: dir}, nil, e.srv.App.Now).Run(t.Context())
		if err != nil || again.Batches != 0 {
			t.Errorf("a second run found work: %+v %v", again, err)
		}
	})
	t.Run("a destination that is off exports nothing", func(t *testing.T) {
		e := newExportEnv(t, false)
		e.send(t, "pl-c", 4)
		dir := t.TempDir()
		if r, err := destination.NewExporter(e.srv.Table, destination.Folder{Dir: dir}, nil, e.srv.App.Now).Run(t.Context()); err != nil || r.Events != 0 {
			t.Errorf("run: %+v %v", r, err)
		}
		if objects, _ := staged(t, dir); len(objects) != 0 {
			t.Errorf("%d objects", len(objects))
		}
	})
	t.Run("a worker stopping after writing a batch, before closing it, neither loses nor doubles an event", func(t *testing.T) {
		e := newExportEnv(t, true)
		e.send(t, "pl-d", 6)
		dir := t.TempDir()
		stage := &flakyStage{Stage: destination.Folder{Dir: dir}, fail: 1}
		if _, err := destination.NewExporter(e.srv.Table, stage, nil, e.srv.App.Now).Run(t.Context()); err == nil {
			t.Fatal("the stopped run reported no error")
		}
		e.send(t, "pl-e", 2) // spooled meanwhile: a later batch
		if _, err := destination.NewExporter(e.srv.Table, stage, nil, e.srv.App.Now).Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		objects, keys := staged(t, dir)
		if problems := sameSet(keys, wantKeys(map[string]int{"pl-d": 6, "pl-e": 2})); problems != "" {
			t.Errorf("%s (objects %v)", problems, objects)
		}
		if n := counted(t, e.srv.Table, e.id); n != 8 {
			t.Errorf("counted %d, want 8", n)
		}
	})
	t.Run("a worker stopping after closing a batch, before it knew, neither loses nor doubles an event", func(t *testing.T) {
		e := newExportEnv(t, true)
		e.send(t, "pl-f", 4)
		dir := t.TempDir()
		crashing := &storetest.CrashOnce{Table: e.srv.Table} // the worker stopped after closing a batch, before it knew
		if _, err := destination.NewExporter(crashing, destination.Folder{Dir: dir}, nil, e.srv.App.Now).Run(t.Context()); err == nil {
			t.Fatal("the stopped run reported no error")
		}
		if _, err := destination.NewExporter(crashing, destination.Folder{Dir: dir}, nil, e.srv.App.Now).Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, keys := staged(t, dir)
		if problems := sameSet(keys, wantKeys(map[string]int{"pl-f": 4})); problems != "" {
			t.Error(problems)
		}
		if n := counted(t, e.srv.Table, e.id); n != 4 {
			t.Errorf("counted %d, want 4", n)
		}
	})
	t.Run("a deleted destination stops the spooling but what was spooled is still exported", func(t *testing.T) {
		e := newExportEnv(t, true)
		e.send(t, "pl-g", 3)
		list := must(t, e.srv.Do(t, http.MethodGet, base, nil), http.StatusOK)
		id := list["items"].([]any)[0].(map[string]any)["_id"].(string)
		must(t, e.srv.Do(t, http.MethodDelete, destPath("p", "production")+"/"+id, nil), http.StatusNoContent)
		spool := ingest.NewSpool(e.srv.Table, nil, e.srv.App.Now).WithCacheTTL(0)
		if active, err := spool.Active(t.Context(), e.id); err != nil || active {
			t.Errorf("still active after the delete: %v %v", active, err)
		}
		dir := t.TempDir()
		if r, err := destination.NewExporter(e.srv.Table, destination.Folder{Dir: dir}, nil, e.srv.App.Now).Run(t.Context()); err != nil || r.Events != 3 {
			t.Errorf("run: %+v %v", r, err)
		}
	})
}

func TestTheLocalDefaultStageIsAFolderBesideTheDataFile(t *testing.T) {
	t.Setenv("FLAGPLANE_EXPORT_DIR", "")
	t.Setenv("FLAGPLANE_EXPORT_BUCKET", "")
	srv := newServer(t)
	out := must(t, srv.Do(t, http.MethodPost, setupPath("p", "production", "clickhouse", "setup"), map[string]any{"endpoint": "abc.clickhouse.cloud"}), http.StatusCreated)
	if dir := out["s3BucketName"].(string); filepath.Base(dir) != "flagplane-export" || !filepath.IsAbs(dir) {
		t.Errorf("stage %q", dir)
	}
}
