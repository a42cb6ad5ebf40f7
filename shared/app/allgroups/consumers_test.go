package allgroups_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/flagplane/flagplane/shared/app"
)

// TestEveryOutboxConsumerIsLinkedByTheDeliveryFunction holds the
// webhook-delivery function to the group packages whose consumers it must
// run: a consumer it does not link would never see an entry in AWS (the
// dispatcher drops messages for consumers it does not have), while the
// local server, which links every group, runs it.
func TestEveryOutboxConsumerIsLinkedByTheDeliveryFunction(t *testing.T) {
	main := filepath.Join("..", "..", "..", "functions", "webhook-delivery", "main.go")
	f, err := parser.ParseFile(token.NewFileSet(), main, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatalf("read the delivery function: %v", err)
	}
	imported := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		imported[p] = true
	}
	consumers := 0
	for _, g := range app.Registered() {
		if g.Consumers == nil {
			continue
		}
		consumers++
		t.Run("webhook-delivery imports the package of group "+g.Name+", which has outbox consumers", func(t *testing.T) {
			if want := registeringPackage(t, g); !imported[want] {
				t.Errorf("%s does not import %s", main, want)
			}
		})
	}
	if consumers == 0 {
		t.Fatal("no registered group has consumers: the test checks nothing")
	}
}
