package infra

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// dockerfile is a Dockerfile as instructions: continuation lines joined,
// comments and blank lines dropped.
type dockerfile []instruction

type instruction struct {
	cmd  string   // upper case: FROM, COPY, RUN...
	args []string // the words after it, options included
	raw  string   // everything after the command, as written
}

func readDockerfile(tb testing.TB, path string) dockerfile {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatalf("Dockerfile: %v", err)
	}
	defer f.Close()
	var out dockerfile
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
		cmd, rest, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.Fields(rest), raw: strings.TrimSpace(rest)})
		cur.Reset()
	}
	if err := s.Err(); err != nil {
		tb.Fatalf("Dockerfile: %v", err)
	}
	return out
}

// all returns the instructions of one command, in order.
func (d dockerfile) all(cmd string) []instruction {
	var out []instruction
	for _, in := range d {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// last returns the last instruction of cmd, or fails.
func (d dockerfile) last(tb testing.TB, cmd string) instruction {
	tb.Helper()
	all := d.all(cmd)
	if len(all) == 0 {
		tb.Fatalf("the Dockerfile has no %s", cmd)
	}
	return all[len(all)-1]
}

// words drops an instruction's --options.
func (in instruction) words() []string {
	var out []string
	for _, a := range in.args {
		if !strings.HasPrefix(a, "--") {
			out = append(out, a)
		}
	}
	return out
}

// copySources are what COPY instructions take from the build context
// (not from another stage).
func (d dockerfile) copySources() []string {
	var out []string
	for _, in := range d.all("COPY") {
		if strings.Contains(in.raw, "--from=") {
			continue
		}
		w := in.words()
		if len(w) >= 2 {
			out = append(out, w[:len(w)-1]...)
		}
	}
	return out
}

// goBuild is the shell command of the RUN that runs go build, its
// --mount options dropped.
func (d dockerfile) goBuild(tb testing.TB) string {
	tb.Helper()
	for _, in := range d.all("RUN") {
		if !strings.Contains(in.raw, "go build") {
			continue
		}
		cmd := in.raw
		for strings.HasPrefix(cmd, "--") {
			_, cmd, _ = strings.Cut(cmd, " ")
			cmd = strings.TrimSpace(cmd)
		}
		return cmd
	}
	tb.Fatal("no RUN of the Dockerfile runs go build")
	return ""
}

// buildOutput is where the Dockerfile's go build writes the binary; the
// final stage copies it from there.
const buildOutput = "/out/flagplane"

// checkDockerBuild plays the Dockerfile's first (builder) stage on the
// build context dir as docker would for goos/goarch: WORKDIR and the
// COPY instructions from the context into a scratch root, then the RUN
// that runs go build there, writing the binary to a temporary folder
// instead of /out. It checks the binary is a static executable for that
// platform.
func checkDockerBuild(t *testing.T, df dockerfile, dir, goos, goarch string) {
	t.Helper()
	cmd := df.goBuild(t)
	if !strings.Contains(cmd, " -o "+buildOutput+" ") {
		t.Fatalf("go build writes elsewhere than %s: %s", buildOutput, cmd)
	}
	root, out := t.TempDir(), t.TempDir()
	workdir := root
	froms := 0
	for _, in := range df {
		if in.cmd == "FROM" {
			if froms++; froms > 1 {
				break
			}
		}
		w := in.words()
		switch {
		case in.cmd == "WORKDIR":
			workdir = filepath.Join(root, w[0])
		case in.cmd == "COPY" && !strings.Contains(in.raw, "--from="):
			dest := w[len(w)-1]
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(workdir, dest)
			} else {
				dest = filepath.Join(root, dest)
			}
			intoDir := strings.HasSuffix(w[len(w)-1], "/") || len(w) > 2
			for _, src := range w[:len(w)-1] {
				to := dest
				if intoDir {
					to = filepath.Join(dest, filepath.Base(src))
				}
				if err := os.CopyFS(to, os.DirFS(filepath.Join(dir, src))); err != nil {
					// A file, not a folder.
					raw, rerr := os.ReadFile(filepath.Join(dir, src))
					if rerr != nil {
						t.Fatalf("COPY %s: %v", src, rerr)
					}
					if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(to, raw, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	cmd = strings.Replace(cmd, " -o "+buildOutput+" ", " -o "+filepath.Join(out, "flagplane")+" ", 1)
	sh := exec.Command("sh", "-c", cmd)
	sh.Dir = workdir
	// As in the golang image: no GOFLAGS, no workspace, the local toolchain.
	sh.Env = append(os.Environ(), "TARGETOS="+goos, "TARGETARCH="+goarch, "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
	if b, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	f, err := elf.Open(filepath.Join(out, "flagplane"))
	if err != nil {
		t.Fatalf("the build made no ELF binary: %v", err)
	}
	defer f.Close()
	if want := map[string]elf.Machine{"arm64": elf.EM_AARCH64, "amd64": elf.EM_X86_64}[goarch]; f.Machine != want {
		t.Errorf("binary for %v, want %v", f.Machine, want)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (%v): the final stage has no C library", p.Type)
		}
	}
}

// goModVersion is the go directive of the repository's go.mod.
func goModVersion(tb testing.TB) string {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	tb.Fatal("go.mod has no go directive")
	return ""
}

func TestDockerfile(t *testing.T) {
	// GIVEN the repository's Dockerfile and go.mod
	df := readDockerfile(t, filepath.Join("..", "Dockerfile"))
	froms := df.all("FROM")
	if len(froms) < 2 {
		t.Fatalf("%d stages, want a builder and a final stage", len(froms))
	}
	builder, final := froms[0].words(), froms[len(froms)-1].words()

	// WHEN its instructions are read
	// THEN it builds flagplane with the module's Go into a small image
	// that runs as a non-root user
	t.Run("the builder is the golang image of go.mod's version", func(t *testing.T) {
		want := goModVersion(t)
		tag, ok := strings.CutPrefix(builder[0], "golang:")
		if !ok || (tag != want && !strings.HasPrefix(tag, want+".")) {
			t.Fatalf("builder %s, want golang:%s[.patch]", builder[0], want)
		}
	})
	t.Run("the builder cross-compiles on the build machine's platform", func(t *testing.T) {
		if !strings.Contains(froms[0].raw, "--platform=$BUILDPLATFORM") {
			t.Fatalf("FROM %s", froms[0].raw)
		}
	})
	t.Run("the final stage is distroless static or scratch", func(t *testing.T) {
		if !strings.HasPrefix(final[0], "gcr.io/distroless/static") && final[0] != "scratch" {
			t.Fatalf("final stage %s", final[0])
		}
	})
	t.Run("the image runs as a non-root user", func(t *testing.T) {
		user := df.last(t, "USER").words()[0]
		if name, _, _ := strings.Cut(user, ":"); name == "root" || name == "0" {
			t.Fatalf("USER %s", user)
		}
	})
	t.Run("the entrypoint is the flagplane binary", func(t *testing.T) {
		if got := df.last(t, "ENTRYPOINT").raw; got != `["/flagplane"]` {
			t.Fatalf("ENTRYPOINT %s", got)
		}
	})
	t.Run("the final stage copies the binary go build writes", func(t *testing.T) {
		found := false
		for _, in := range df.all("COPY") {
			if w := in.words(); strings.Contains(in.raw, "--from=build") && len(w) == 2 && w[0] == buildOutput && w[1] == "/flagplane" {
				found = true
			}
		}
		if !found {
			t.Fatalf("no COPY --from=build %s /flagplane", buildOutput)
		}
	})
	t.Run("the build is static (CGO_ENABLED=0) for the target platform", func(t *testing.T) {
		cmd := df.goBuild(t)
		for _, want := range []string{"CGO_ENABLED=0", "GOOS=$TARGETOS", "GOARCH=$TARGETARCH", "./functions/flagplane"} {
			if !strings.Contains(cmd, want) {
				t.Errorf("go build lacks %s: %s", want, cmd)
			}
		}
	})
	t.Run("every file or folder the Dockerfile copies exists in the repository", func(t *testing.T) {
		for _, src := range df.copySources() {
			if _, err := os.Stat(filepath.Join("..", src)); err != nil {
				t.Errorf("COPY %s: %v", src, err)
			}
		}
	})
}
