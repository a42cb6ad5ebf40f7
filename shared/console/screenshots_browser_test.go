package console_test

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/flagplane/flagplane/shared/console/consoletest"
)

// envScreenshots set to "write" (make screenshots) writes the README's
// screenshots to docs/images; otherwise the test takes them and checks
// they are pictures of the viewport, writing nothing.
const envScreenshots = "FLAGPLANE_SCREENSHOTS"

// The screenshots' viewport: wide enough for the tables, small enough for
// the README (and each PNG well under 150 KB).
const shotWidth, shotHeight = 1280, 800

func TestConsoleScreenshots(t *testing.T) {
	t.Parallel() // each test has its own server and browser
	c := consoletest.Start(t)
	s := seedConsole(t, c)
	c.SignIn(t, c.Token)
	c.Page.Do(t, chromedp.EmulateViewport(shotWidth, shotHeight))
	write := os.Getenv(envScreenshots) == "write"
	dir := filepath.Join("..", "..", "docs", "images")
	shots := []struct{ name, path string }{
		{"projects", "/"},
		{"flags", "/projects/shop/flags"},
		{"flag", "/projects/shop/flags/checkout?env=test"},
		{"approvals", "/approvals/" + s.approval},
		{"audit", "/audit/" + s.audit},
		{"environments", "/projects/shop/environments"},
	}
	for _, shot := range shots {
		t.Run("the "+shot.name+" page is pictured", func(t *testing.T) {
			c.Go(t, shot.path)
			settle(c)
			// No focus ring or caret in the picture.
			c.Page.Eval(t, `document.activeElement && document.activeElement.blur(), window.scrollTo(0, 0), true`, nil)
			raw := capture(t, c)
			cfg, err := png.DecodeConfig(bytes.NewReader(raw))
			if err != nil {
				t.Fatalf("the screenshot is no PNG: %v", err)
			}
			if cfg.Width != shotWidth || cfg.Height != shotHeight {
				t.Errorf("the screenshot is %dx%d, want the viewport's %dx%d", cfg.Width, cfg.Height, shotWidth, shotHeight)
			}
			if blank(t, raw) {
				t.Error("the screenshot is one colour: the page drew nothing")
			}
			t.Logf("console-%s.png: %d bytes", shot.name, len(raw))
			if !write {
				return
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "console-"+shot.name+".png"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// capture is a PNG of the viewport.
func capture(tb testing.TB, c *consoletest.Console) []byte {
	tb.Helper()
	var out []byte
	c.Page.Do(tb, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		var err error
		out, err = chromedp.CaptureScreenshot()(ctx, target)
		return err
	}))
	return out
}

// blank reports whether a PNG is one colour throughout.
func blank(tb testing.TB, raw []byte) bool {
	tb.Helper()
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		tb.Fatal(err)
	}
	b := img.Bounds()
	first := img.At(b.Min.X, b.Min.Y)
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			if img.At(x, y) != first {
				return false
			}
		}
	}
	return true
}
