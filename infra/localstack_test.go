package infra

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The LocalStack path cannot run here (no Docker engine), so these tests
// hold it to what can be checked: the compose file parses and is safe, and
// every script parses.

const localstackDir = "../localstack"

// composeFile is the part of docker-compose.yml the tests read.
type composeFile struct {
	Services map[string]struct {
		Image       string   `yaml:"image"`
		Ports       []string `yaml:"ports"`
		Volumes     []string `yaml:"volumes"`
		Environment yaml.Node
		Healthcheck *struct {
			Test any `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
}

// interpolationDefault resolves "${VAR:-default}" to its default, as
// Compose does when VAR is unset; other text is returned as is.
var interpolation = regexp.MustCompile(`\$\{[A-Z_]+:-([^}]*)\}`)

func interpolationDefault(s string) string { return interpolation.ReplaceAllString(s, "$1") }

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(localstackDir, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("docker-compose.yml is not valid YAML: %v", err)
	}
	return c
}

// environment reads a service's environment in either Compose form
// (mapping or list of KEY=VALUE), with defaults applied.
func environment(t *testing.T, n yaml.Node) map[string]string {
	t.Helper()
	env := map[string]string{}
	switch n.Kind {
	case yaml.MappingNode:
		var m map[string]string
		if err := n.Decode(&m); err != nil {
			t.Fatal(err)
		}
		for k, v := range m {
			env[k] = interpolationDefault(v)
		}
	case yaml.SequenceNode:
		var l []string
		if err := n.Decode(&l); err != nil {
			t.Fatal(err)
		}
		for _, kv := range l {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = interpolationDefault(v)
		}
	}
	return env
}

func TestLocalStackCompose(t *testing.T) {
	// GIVEN localstack/docker-compose.yml
	// WHEN it is parsed as YAML
	c := loadCompose(t)
	ls, ok := c.Services["localstack"]
	if !ok {
		t.Fatal("no localstack service")
	}

	// THEN LocalStack is pinned, reachable from this machine only, and set
	// up to run the whole stack
	tests := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"the image is pinned to a release, not a moving tag", func(t *testing.T) {
			img := interpolationDefault(ls.Image)
			name, tag, ok := strings.Cut(img, ":")
			if !ok || name != "localstack/localstack" || slices.Contains([]string{"", "latest", "stable"}, tag) {
				t.Fatalf("image %q", img)
			}
		}},
		{"every published port of every service is bound to 127.0.0.1", func(t *testing.T) {
			for name, s := range c.Services {
				for _, p := range s.Ports {
					if !strings.HasPrefix(p, "127.0.0.1:") {
						t.Errorf("service %s publishes %q beyond loopback", name, p)
					}
				}
			}
		}},
		{"the edge port 4566 is published", func(t *testing.T) {
			if !slices.Contains(ls.Ports, "127.0.0.1:4566:4566") {
				t.Fatalf("ports %v", ls.Ports)
			}
		}},
		{"every service the stack deploys is enabled", func(t *testing.T) {
			services := strings.Split(environment(t, ls.Environment)["SERVICES"], ",")
			for _, want := range []string{"dynamodb", "lambda", "apigateway", "sqs", "events", "iam", "logs", "cloudformation", "s3", "ssm", "sts"} {
				if !slices.Contains(services, want) {
					t.Errorf("SERVICES lacks %s: %v", want, services)
				}
			}
		}},
		{"Lambda can start function containers through the Docker socket", func(t *testing.T) {
			found := false
			for _, v := range ls.Volumes {
				found = found || strings.HasSuffix(interpolationDefault(v), ":/var/run/docker.sock")
			}
			if !found {
				t.Fatalf("volumes %v", ls.Volumes)
			}
		}},
		{"the ready hooks are mounted where LocalStack runs them", func(t *testing.T) {
			if !slices.Contains(ls.Volumes, "./init/ready.d:/etc/localstack/init/ready.d:ro") {
				t.Fatalf("volumes %v", ls.Volumes)
			}
		}},
		{"health waits for the ready hooks", func(t *testing.T) {
			if ls.Healthcheck == nil || !strings.Contains(strings.Join(strs(ls.Healthcheck.Test), " "), "/_localstack/init/ready") {
				t.Fatalf("healthcheck %+v", ls.Healthcheck)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.check)
	}
}

func TestLocalStackScripts(t *testing.T) {
	// GIVEN every shell script under localstack/
	var scripts []string
	err := filepath.WalkDir(localstackDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// npm packages the tiers install (Unleash's) bring scripts of their own.
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".sh") {
			scripts = append(scripts, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	hooks, _ := filepath.Glob(filepath.Join(localstackDir, "init", "ready.d", "*.sh"))
	if len(hooks) == 0 {
		t.Fatal("no ready hooks under localstack/init/ready.d")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed to check the scripts: %v", err)
	}

	// WHEN bash parses each one (-n: read, do not run)
	// THEN each parses; a script starts with a shebang and is executable,
	// a sourced library (marked "# shellcheck shell=bash") is neither
	for _, s := range scripts {
		t.Run(strings.TrimPrefix(s, "../")+" parses and runs or is sourced as it should", func(t *testing.T) {
			if out, err := exec.Command(bash, "-n", s).CombinedOutput(); err != nil {
				t.Fatalf("bash -n: %v\n%s", err, out)
			}
			raw, err := os.ReadFile(s)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(s)
			if err != nil {
				t.Fatal(err)
			}
			executable := fi.Mode().Perm()&0o111 != 0
			if strings.HasPrefix(string(raw), "# shellcheck shell=bash") {
				if executable {
					t.Error("a sourced library is executable")
				}
				return
			}
			if !strings.HasPrefix(string(raw), "#!") {
				t.Error("no shebang line")
			}
			if !executable {
				t.Error("not executable")
			}
		})
	}
}
