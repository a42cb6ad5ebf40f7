// Package console holds flagplane's web console: static files embedded in
// the binary (static/), a page that signs in with an access token or an
// OAuth client and then calls only the public API, as curl would, so every
// rule, right and audit entry holds the same. Handler serves the files;
// the console's group wires it where flagplane runs.
package console

import (
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

//go:embed static
var static embed.FS

// Prefix is where the console's files are served; the page itself is at "/".
const Prefix = "/console/"

// Files is the console's file tree (index.html, console.css, js/...).
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	return sub
}

// securityHeaders are sent with every console file: the page loads nothing
// from another host (script, style, image, frame), and may call the API of
// its own origin only.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"X-Frame-Options":        "DENY",
}

type file struct {
	body, gz    []byte
	contentType string
}

var (
	loadOnce sync.Once
	files    map[string]file
	loadErr  error
)

// load reads and gzips every file once per process.
func load() (map[string]file, error) {
	loadOnce.Do(func() {
		out := map[string]file{}
		loadErr = fs.WalkDir(Files(), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(Files(), p)
			if err != nil {
				return fmt.Errorf("read console file %q: %w", p, err)
			}
			var z bytes.Buffer
			w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
			w.Write(b)
			w.Close()
			ct := mime.TypeByExtension(path.Ext(p))
			if ct == "" {
				ct = "application/octet-stream"
			}
			out[p] = file{body: b, gz: z.Bytes(), contentType: ct}
			return nil
		})
		files = out
	})
	return files, loadErr
}

// Lookup returns the file served at urlPath: "/" is the page, Prefix+name
// a file of the tree. ok is false for anything else.
func Lookup(urlPath string) (name string, ok bool) {
	switch {
	case urlPath == "/" || urlPath == "/index.html":
		return "index.html", true
	case strings.HasPrefix(urlPath, Prefix):
		name = strings.TrimPrefix(urlPath, Prefix)
		if name == "" || name == "index.html" || strings.Contains(name, "..") {
			return "", false
		}
		return name, true
	}
	return "", false
}

// Serve writes the file named (from Lookup), gzipped when the client takes
// gzip, with the console's security headers. The page is never cached (a
// new binary's page must load its own files); the other files are revalidated
// by ETag. A name not in the tree is a 404.
func Serve(w http.ResponseWriter, r *http.Request, name string) {
	all, err := load()
	f, ok := all[name]
	if err != nil || !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	for k, v := range securityHeaders {
		h.Set(k, v)
	}
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("Vary", "Accept-Encoding")
	etag := fmt.Sprintf(`"%x-%d"`, crc(f.body), len(f.body))
	h.Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.body
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

// crc is FNV-1a, enough to tell one build's file from another's.
func crc(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// Handler serves the console alone: the page at "/", its files under Prefix.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := Lookup(r.URL.Path)
		if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			http.NotFound(w, r)
			return
		}
		Serve(w, r, name)
	})
}

// Sizes returns each file's size and gzipped size, for the size budget.
func Sizes() (map[string][2]int, error) {
	all, err := load()
	if err != nil {
		return nil, err
	}
	out := make(map[string][2]int, len(all))
	for n, f := range all {
		out[n] = [2]int{len(f.body), len(f.gz)}
	}
	return out, nil
}
