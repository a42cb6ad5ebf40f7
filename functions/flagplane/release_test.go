package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the checkout's root, where the Makefile and Dockerfile are.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// needReleaseTools skips when make or GNU tar is missing: make release
// says so itself, and this machine cannot run it.
func needReleaseTools(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		tb.Skip("make is not installed")
	}
	if out, err := exec.Command("tar", "--version").Output(); err != nil || !strings.Contains(string(out), "GNU tar") {
		tb.Skip("tar is not GNU tar: make release needs TAR=gtar here")
	}
}

// makeRelease runs make release with vars and returns its output.
func makeRelease(tb testing.TB, env []string, vars ...string) string {
	tb.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-C", repoRoot(tb), "release"}, vars...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("make release %v: %v\n%s", vars, err, out)
	}
	return string(out)
}

// archived is one member of a release archive.
type archived struct {
	hdr  *tar.Header
	body []byte
}

func readArchive(tb testing.TB, path string) (*gzip.Header, []archived) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	var out []archived
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, archived{hdr, body})
	}
	return &zr.Header, out
}

func gitOutput(tb testing.TB, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = repoRoot(tb)
	out, err := cmd.Output()
	if err != nil {
		tb.Skipf("git %v: %v (not a git checkout)", args, err)
	}
	return strings.TrimSpace(string(out))
}

func TestRelease(t *testing.T) {
	needReleaseTools(t)
	// GIVEN make release for this machine's platform only, with a version given
	const version = "v9.8.7-releasetest"
	dist := t.TempDir()
	name := "flagplane_" + version + "_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
	makeRelease(t, nil, "DIST="+dist, "RELEASE_TARGETS="+runtime.GOOS+"/"+runtime.GOARCH, "VERSION="+version)

	// WHEN its archive and checksums are read
	// THEN the archive holds the binary and the README, reproducibly
	// packed, the checksum file names it, and the binary names the version
	t.Run("dist holds the archive and SHA256SUMS, nothing else", func(t *testing.T) {
		entries, err := os.ReadDir(dist)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := []string{"SHA256SUMS", name}; !slices.Equal(names, want) {
			t.Fatalf("dist holds %v, want %v", names, want)
		}
	})
	t.Run("SHA256SUMS has one line: the archive's sha256 and its name", func(t *testing.T) {
		raw, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
		if err != nil {
			t.Fatal(err)
		}
		archive, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(archive)
		if want := hex.EncodeToString(sum[:]) + "  " + name + "\n"; string(raw) != want {
			t.Fatalf("SHA256SUMS:\n%q\nwant\n%q", raw, want)
		}
	})

	gz, members := readArchive(t, filepath.Join(dist, name))
	t.Run("the archive holds flagplane, README.md, the docs pages and their images (and LICENSE when there is one)", func(t *testing.T) {
		want := []string{"flagplane", "README.md"}
		pages, _ := filepath.Glob(filepath.Join(repoRoot(t), "docs", "*.md"))
		images, _ := filepath.Glob(filepath.Join(repoRoot(t), "docs", "images", "*.png"))
		var docs []string
		for _, p := range append(pages, images...) {
			rel, _ := filepath.Rel(repoRoot(t), p)
			docs = append(docs, filepath.ToSlash(rel))
		}
		slices.Sort(docs) // as make release names them: byte order
		want = append(want, docs...)
		if _, err := os.Stat(filepath.Join(repoRoot(t), "LICENSE")); err == nil {
			want = append(want, "LICENSE")
		}
		var got []string
		for _, m := range members {
			got = append(got, m.hdr.Name)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("members %v, want %v", got, want)
		}
	})
	t.Run("every relative link and image of the archive's pages is in the archive", func(t *testing.T) {
		held := map[string]bool{}
		for _, m := range members {
			held[m.hdr.Name] = true
		}
		for _, m := range members {
			if !strings.HasSuffix(m.hdr.Name, ".md") {
				continue
			}
			for _, ref := range localLinks(string(m.body)) {
				target := path.Clean(path.Join(path.Dir(m.hdr.Name), ref))
				if !held[target] {
					t.Errorf("%s links %s, which the archive does not hold", m.hdr.Name, ref)
				}
			}
		}
	})
	t.Run("the README in the archive is the repository's", func(t *testing.T) {
		readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			if m.hdr.Name == "README.md" && string(m.body) != string(readme) {
				t.Fatal("README.md differs from the repository's")
			}
		}
	})
	t.Run("the members are owned by 0, dated at the commit, with fixed modes", func(t *testing.T) {
		commit, _ := strconv.ParseInt(gitOutput(t, "log", "-1", "--format=%ct"), 10, 64)
		if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
			commit, _ = strconv.ParseInt(s, 10, 64)
		}
		for _, m := range members {
			h := m.hdr
			want := int64(0o644)
			if h.Name == "flagplane" {
				want = 0o755
			}
			if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || h.Mode != want || h.ModTime.Unix() != commit {
				t.Errorf("%s: uid %d gid %d %q/%q mode %o time %d, want 0 0 numeric %o %d",
					h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.Mode, h.ModTime.Unix(), want, commit)
			}
		}
	})
	t.Run("the gzip header carries no name and no time (gzip -n)", func(t *testing.T) {
		if gz.Name != "" || !gz.ModTime.IsZero() {
			t.Fatalf("gzip header name %q time %v", gz.Name, gz.ModTime)
		}
	})

	bin := filepath.Join(t.TempDir(), "flagplane")
	for _, m := range members {
		if m.hdr.Name == "flagplane" {
			if err := os.WriteFile(bin, m.body, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, arg := range []string{"version", "-version"} {
		t.Run("flagplane "+arg+" names the version given and the commit", func(t *testing.T) {
			out, err := exec.Command(bin, arg).Output()
			if err != nil {
				t.Fatalf("%s %s: %v", bin, arg, err)
			}
			first, _, _ := strings.Cut(string(out), "\n")
			if first != "flagplane "+version {
				t.Errorf("first line %q, want %q", first, "flagplane "+version)
			}
			if head := gitOutput(t, "rev-parse", "HEAD"); !strings.Contains(string(out), "revision "+head) {
				t.Errorf("no revision %s in:\n%s", head, out)
			}
		})
	}
}

// fakeGo is a go command that records its environment and arguments in
// the file $FAKE_GO_RECORD, one go build per line of words, and with
// FAKE_GO_OUTPUT=1 creates the -o file so what follows the build can run.
const fakeGo = `#!/bin/sh
{
	printf 'CGO_ENABLED=%s GOFLAGS=%s GOOS=%s GOARCH=%s' "${CGO_ENABLED-}" "${GOFLAGS-}" "${GOOS-}" "${GOARCH-}"
	for a in "$@"; do printf ' [%s]' "$a"; done
	echo
} >>"$FAKE_GO_RECORD"
while [ $# -gt 0 ]; do
	if [ "$1" = -o ] && [ "${FAKE_GO_OUTPUT-}" = 1 ]; then : >"$2"; fi
	shift
done
`

// recordedBuild is what the fake go recorded, the -o value left out: the
// build's environment and flags, which make release and the Dockerfile
// must share.
func recordedBuild(tb testing.TB, record string) string {
	tb.Helper()
	raw, err := os.ReadFile(record)
	if err != nil {
		tb.Fatalf("the fake go ran no build: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 1 {
		tb.Fatalf("%d builds recorded, want 1:\n%s", len(lines), raw)
	}
	words := strings.Split(lines[0], " ")
	for i, w := range words {
		if w == "[-o]" && i+1 < len(words) {
			return strings.Join(slices.Delete(words, i, i+2), " ")
		}
	}
	tb.Fatalf("no -o in %s", lines[0])
	return ""
}

// dockerfileLines are the Dockerfile's instructions, continuation lines
// joined and comments dropped.
func dockerfileLines(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open(filepath.Join(repoRoot(tb), "Dockerfile"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	var cur strings.Builder
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if more, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(line)
		out = append(out, cur.String())
		cur.Reset()
	}
	if err := s.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// dockerGoBuild is the shell command of the RUN that runs go build, its
// --mount options dropped.
func dockerGoBuild(tb testing.TB) string {
	tb.Helper()
	for _, line := range dockerfileLines(tb) {
		cmd, ok := strings.CutPrefix(line, "RUN ")
		if !ok || !strings.Contains(cmd, "go build") {
			continue
		}
		cmd = strings.TrimSpace(cmd)
		for strings.HasPrefix(cmd, "--") {
			_, cmd, _ = strings.Cut(cmd, " ")
			cmd = strings.TrimSpace(cmd)
		}
		return cmd
	}
	tb.Fatal("no RUN of the Dockerfile runs go build")
	return ""
}

func TestDockerfileBuildsAsRelease(t *testing.T) {
	needReleaseTools(t)
	// GIVEN a fake go on the PATH that records each build it is asked for
	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	const version, revision = "v1.2.3-parity", "0123456789abcdef0123456789abcdef01234567"

	// WHEN make release builds linux/arm64 with it, and the Dockerfile's
	// go build runs as docker would run it for linux/arm64
	releaseRecord := filepath.Join(t.TempDir(), "record")
	makeRelease(t, []string{"FAKE_GO_RECORD=" + releaseRecord, "FAKE_GO_OUTPUT=1"},
		"GO="+filepath.Join(fake, "go"), "DIST="+t.TempDir(), "RELEASE_TARGETS=linux/arm64",
		"VERSION="+version, "REVISION="+revision)
	dockerRecord := filepath.Join(t.TempDir(), "record")
	sh := exec.Command("sh", "-c", dockerGoBuild(t))
	sh.Dir = t.TempDir()
	// A RUN sees the ARGs as variables; the golang image sets no GOFLAGS.
	sh.Env = append(os.Environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_GO_RECORD="+dockerRecord, "TARGETOS=linux", "TARGETARCH=arm64", "VERSION="+version, "REVISION="+revision, "GOFLAGS=")
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's go build: %v\n%s", err, out)
	}

	// THEN both are one build: same environment, flags and package
	release, docker := recordedBuild(t, releaseRecord), recordedBuild(t, dockerRecord)
	t.Run("the Dockerfile's go build is make release's, the -o path aside", func(t *testing.T) {
		if release != docker {
			t.Fatalf("make release:\n  %s\nDockerfile:\n  %s", release, docker)
		}
	})
	t.Run("the build is static, trimmed, for the target, of ./functions/flagplane, stamped with the version and revision", func(t *testing.T) {
		for _, want := range []string{"CGO_ENABLED=0 ", "GOFLAGS= ", "GOOS=linux GOARCH=arm64", "[-trimpath]", "[-buildvcs=auto]",
			"-X main.version=" + version + " -X main.revision=" + revision + "]", "[./functions/flagplane]"} {
			if !strings.Contains(release, want) {
				t.Errorf("the build lacks %s: %s", want, release)
			}
		}
	})
	t.Run("make image passes the version and revision the Dockerfile declares", func(t *testing.T) {
		cmd := exec.Command("make", "-s", "--no-print-directory", "-C", repoRoot(t), "image", "VERSION="+version, "REVISION="+revision)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("make image: %v", err)
		}
		lines := dockerfileLines(t)
		for _, arg := range []string{"VERSION", "REVISION"} {
			if !slices.Contains(lines, "ARG "+arg) {
				t.Errorf("the Dockerfile declares no ARG %s", arg)
			}
		}
		if want := "docker build --build-arg VERSION=" + version + " --build-arg REVISION=" + revision + " "; !strings.HasPrefix(string(out), want) {
			t.Errorf("make image printed %q, want it to begin %q", out, want)
		}
	})
	t.Run("the image runs serve by default and relay as its command, both on the exposed port", func(t *testing.T) {
		lines := dockerfileLines(t)
		for _, want := range []string{`ENTRYPOINT ["/flagplane"]`, "ENV FLAGPLANE_ADDR=:8080", "EXPOSE 8080"} {
			if !slices.Contains(lines, want) {
				t.Errorf("the Dockerfile lacks %s", want)
			}
		}
		var cmd string
		for _, l := range lines {
			if c, ok := strings.CutPrefix(l, "CMD "); ok {
				cmd = c
			}
		}
		if !strings.HasPrefix(cmd, `["serve"`) {
			t.Errorf("CMD %s, want serve", cmd)
		}
		// relay is a command of the same binary, and reads FLAGPLANE_ADDR.
		res := runCLI(t, t.TempDir(), "relay", "-h")
		if res.code != 0 || !strings.Contains(res.stdout, "env FLAGPLANE_ADDR") {
			t.Errorf("relay -h: exit %d\n%s", res.code, res.stdout)
		}
	})
}

func TestStampedVersion(t *testing.T) {
	defer func(v, r string) { version, revision = v, r }(version, revision)
	tests := []struct {
		name     string
		x, xr    string // the -X values
		in, want build
	}{
		{name: "no -X values leave what the toolchain recorded", in: build{version: "v1.0.0", revision: "abc"},
			want: build{version: "v1.0.0", revision: "abc"}},
		{name: "the -X version replaces the module's", x: "v2.0.0-3-gabc-dirty", in: build{version: "(devel)", revision: "abc"},
			want: build{version: "v2.0.0-3-gabc-dirty", revision: "abc"}},
		{name: "the -X revision fills in where the toolchain read none", x: "v2", xr: "def", in: build{version: "(devel)"},
			want: build{version: "v2", revision: "def"}},
		{name: "the toolchain's revision wins over the -X one", xr: "def", in: build{version: "v1", revision: "abc"},
			want: build{version: "v1", revision: "abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version, revision = tt.x, tt.xr
			if got := stamped(tt.in); got != tt.want {
				t.Errorf("stamped(%+v) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// linkRE finds Markdown links and images, and HTML src and href attributes.
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)|(?:src|href)="([^"]+)"`)

// fenceRE finds fenced code blocks, whose text is an example, not a link.
var fenceRE = regexp.MustCompile("(?ms)^(```+).*?^```+")

// localLinks returns the targets of page's links that point into the
// archive: no scheme, no bare anchor, not in a code block; the anchor part
// is dropped.
func localLinks(page string) []string {
	var refs []string
	for _, m := range linkRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(page, ""), -1) {
		ref := m[1] + m[2]
		if ref == "" || strings.HasPrefix(ref, "#") || strings.Contains(ref, "://") || strings.HasPrefix(ref, "mailto:") {
			continue
		}
		if i := strings.IndexByte(ref, '#'); i >= 0 {
			ref = ref[:i]
		}
		refs = append(refs, ref)
	}
	return refs
}
