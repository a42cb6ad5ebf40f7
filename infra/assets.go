package infra

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ModulePath is this repository's Go module; RepoRoot looks for its go.mod.
const ModulePath = "github.com/flagplane/flagplane"

// DefaultAssetDir is where `make build` leaves <function>/bootstrap,
// relative to the repository root.
const DefaultAssetDir = "bin/lambda"

// RepoRoot finds the repository root by walking up from dir to the go.mod
// of ModulePath, so the CDK app finds bin/lambda whichever directory the
// CLI runs it from.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("repo root: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if declaresModule(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("repo root: no go.mod of %s in %s or above", ModulePath, dir)
		}
	}
}

func declaresModule(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == ModulePath
		}
	}
	return false
}

// CheckAssets reports every function whose <dir>/<name>/bootstrap is not a
// regular file, so a missing `make build` is one clear message rather than
// a CDK stack trace.
func CheckAssets(dir string, names []string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("asset directory %s does not exist: run `make build`", dir)
	}
	var missing []string
	var errs []error
	for _, n := range names {
		p := filepath.Join(dir, n, "bootstrap")
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, n)
		case err != nil:
			errs = append(errs, err)
		case !fi.Mode().IsRegular():
			errs = append(errs, fmt.Errorf("%s is not a regular file", p))
		}
	}
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("no bootstrap in %s for %s: run `make build`", dir, strings.Join(missing, ", ")))
	}
	return errors.Join(errs...)
}
