package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// privateTargets are webhook URLs inside the machine or its network, each
// written as an address, so that checking them needs no DNS query. The
// tests create webhooks that are off and never deliver: nothing is sent to
// any of them.
var privateTargets = []string{
	"http://169.254.169.254/latest/meta-data/",
	"http://10.0.0.1/",
	"http://[::ffff:127.0.0.1]/",
	"http://2130706433/",
}

// createWebhook asks for a webhook that is off, so nothing is ever delivered to it.
func createWebhook(t *testing.T, s *server, token, target string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"url": target, "sign": false, "on": false})
	return do(t, "POST", s.URL+"/api/v2/webhooks", token, string(body))
}

func TestServeWebhookGuard(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		allow bool
	}{
		{"on a loopback address, private targets are allowed by default", nil, true},
		{"on every interface (0.0.0.0), private targets are refused by default", []string{"-addr", "0.0.0.0:0"}, false},
		{"on every interface, -webhooks-allow-private allows them", []string{"-addr", "0.0.0.0:0", "-webhooks-allow-private"}, true},
		{"on a loopback address, -webhooks-allow-private=false refuses them", []string{"-webhooks-allow-private=false"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, filepath.Join(t.TempDir(), "flagplane.db"), tc.args...)
			token := s.adminToken(t)
			if line := s.waitForLog(t, "flagplane started", time.Second); line["webhooksAllowPrivate"] != tc.allow {
				t.Errorf("start line says webhooksAllowPrivate=%v", line["webhooksAllowPrivate"])
			}
			for _, target := range privateTargets {
				status, body := createWebhook(t, s, token, target)
				switch {
				case tc.allow && status != http.StatusOK:
					t.Errorf("%s: %d %s, want 200", target, status, body)
				case !tc.allow && (status != http.StatusBadRequest || !strings.Contains(body, `field \"url\"`)):
					t.Errorf("%s: %d %s, want 400 naming the url", target, status, body)
				}
			}
		})
	}
	t.Run("the environment variable decides when the flag is not given", func(t *testing.T) {
		t.Setenv("FLAGPLANE_WEBHOOKS_ALLOW_PRIVATE", "true")
		s := startServer(t, filepath.Join(t.TempDir(), "flagplane.db"), "-addr", "0.0.0.0:0")
		if status, body := createWebhook(t, s, s.adminToken(t), "http://10.0.0.1/"); status != http.StatusOK {
			t.Errorf("%d %s", status, body)
		}
	})
}

// selfSigned writes a certificate for 127.0.0.1 and its key, as PEM files
// in dir, and returns their paths and the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "flagplane test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ = x509.ParseCertificate(der)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, cert := selfSigned(t, dir)
	s := startServer(t, filepath.Join(dir, "flagplane.db"), "-tls-cert", certFile, "-tls-key", keyFile)
	token := s.adminToken(t)
	if !strings.HasPrefix(s.URL, "https://127.0.0.1:") {
		t.Fatalf("the start line's url is not https: %s", s.URL)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}, Timeout: 10 * time.Second}

	t.Run("the server answers over HTTPS with its certificate", func(t *testing.T) {
		req, _ := http.NewRequest("GET", s.URL+"/api/v2/projects", nil)
		req.Header.Set("Authorization", token)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK || res.TLS == nil {
			t.Errorf("status %d, TLS %v", res.StatusCode, res.TLS != nil)
		}
	})
	t.Run("a client that does not trust the certificate is refused", func(t *testing.T) {
		if res, err := http.Get(s.URL + "/healthz"); err == nil {
			res.Body.Close()
			t.Errorf("answered %d without trusting the certificate", res.StatusCode)
		}
	})
	t.Run("plain HTTP on the port is refused", func(t *testing.T) {
		plain := "http://" + strings.TrimPrefix(s.URL, "https://")
		res, err := (&http.Client{Timeout: 10 * time.Second}).Get(plain + "/healthz")
		if err != nil {
			return // refused outright: fine
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusBadRequest || strings.Contains(string(body), `"status":"ok"`) {
			t.Errorf("plain HTTP answered %d %s", res.StatusCode, body)
		}
	})
}

func TestServeRateLimitsAndCORS(t *testing.T) {
	s := startServer(t, filepath.Join(t.TempDir(), "flagplane.db"), "-rate-limit-route", "3")
	token := s.adminToken(t)
	get := func(path string, headers ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		req.Header.Set("Authorization", token)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	t.Run("the fourth request to a route limited to 3 is 429 with the headers", func(t *testing.T) {
		var last *http.Response
		for attempt := 0; attempt < 3; attempt++ { // again if the ten-second window turned during the burst
			resets := map[string]bool{}
			for i := 0; i < 4; i++ {
				last = get("/api/v2/projects")
				resets[last.Header.Get("X-Ratelimit-Reset")] = true
			}
			if len(resets) == 1 {
				break
			}
		}
		if last.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("status %d", last.StatusCode)
		}
		if r, err := strconv.Atoi(last.Header.Get("Retry-After")); err != nil || r < 1 || r > 10 {
			t.Errorf("Retry-After %q", last.Header.Get("Retry-After"))
		}
		reset, err := strconv.ParseInt(last.Header.Get("X-Ratelimit-Reset"), 10, 64)
		if now := time.Now().UnixMilli(); err != nil || reset < now || reset > now+10_000 {
			t.Errorf("X-Ratelimit-Reset %q is not the window's end in epoch ms", last.Header.Get("X-Ratelimit-Reset"))
		}
		if last.Header.Get("X-Ratelimit-Route-Remaining") != "0" || last.Header.Get("X-Ratelimit-Global-Remaining") == "" {
			t.Errorf("headers %v", last.Header)
		}
	})
	t.Run("the global limit defaults to 2000 per 10 seconds", func(t *testing.T) {
		res := get("/api/v2/tokens")
		if n, err := strconv.Atoi(res.Header.Get("X-Ratelimit-Global-Remaining")); err != nil || n < 1900 || n >= 2000 {
			t.Errorf("X-Ratelimit-Global-Remaining %q", res.Header.Get("X-Ratelimit-Global-Remaining"))
		}
	})
	t.Run("the health check is not limited", func(t *testing.T) {
		for i := 0; i < 6; i++ {
			if status, _ := do(t, "GET", s.URL+"/healthz", "", ""); status != http.StatusOK {
				t.Fatalf("status %d", status)
			}
		}
	})
	t.Run("CORS is on by default: a preflight is answered 204 without a token", func(t *testing.T) {
		req, _ := http.NewRequest("OPTIONS", s.URL+"/api/v2/projects", nil)
		req.Header.Set("Origin", "http://localhost:5173")
		req.Header.Set("Access-Control-Request-Method", "POST")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" {
			t.Errorf("status %d, headers %v", res.StatusCode, res.Header)
		}
	})
	t.Run("-cors-origins none turns CORS off and -rate-limit-route 0 the route limit", func(t *testing.T) {
		off := startServer(t, filepath.Join(t.TempDir(), "flagplane.db"), "-cors-origins", "none", "-rate-limit-route", "0", "-rate-limit-global", "0")
		tok := off.adminToken(t)
		for i := 0; i < 5; i++ {
			req, _ := http.NewRequest("GET", off.URL+"/api/v2/projects", nil)
			req.Header.Set("Authorization", tok)
			req.Header.Set("Origin", "http://localhost:5173")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "" || res.Header.Get("X-Ratelimit-Reset") != "" {
				t.Fatalf("status %d, headers %v", res.StatusCode, res.Header)
			}
		}
	})
}
