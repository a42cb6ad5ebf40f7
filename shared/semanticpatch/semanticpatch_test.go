package semanticpatch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

func TestParse(t *testing.T) {
	t.Run("the envelope and each instruction as sent are kept", func(t *testing.T) {
		body := `{"comment":"why","environmentKey":"production","instructions":[{"kind":"turnFlagOn"},{"values":["u1"],"kind":"addUserTargets"}]}`
		p, err := semanticpatch.Parse([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if p.Comment != "why" || p.EnvironmentKey != "production" || len(p.Instructions) != 2 || p.Instructions[1].Kind != "addUserTargets" {
			t.Fatalf("patch %+v", p)
		}
		out, err := json.Marshal(p.Instructions[1])
		if err != nil || string(out) != `{"values":["u1"],"kind":"addUserTargets"}` {
			t.Errorf("instruction marshals to %s, %v; want it as sent", out, err)
		}
	})
	many := `{"instructions":[` + strings.TrimSuffix(strings.Repeat(`{"kind":"k"},`, semanticpatch.MaxInstructions+1), ",") + `]}`
	refused := []struct {
		name, body, part string
	}{
		{"a body that is no object is refused", `[{"kind":"turnFlagOn"}]`, `"instructions"`},
		{"an empty body is refused", ``, "must be an object"},
		{"a body without instructions is refused", `{"comment":"x"}`, `field "instructions" is required`},
		{"an empty instruction list is refused", `{"instructions":[]}`, "at least one"},
		{"too many instructions are refused", many, fmt.Sprintf("at most %d", semanticpatch.MaxInstructions)},
		{"an instruction that is no object is refused naming its index", `{"instructions":[{"kind":"a"},"turnFlagOn"]}`, "instructions[1]: must be an object"},
		{"an instruction without a kind is refused naming its index", `{"instructions":[{"kind":"a"},{"values":[]}]}`, `instructions[1]: field "kind"`},
		{"a kind that is not a string is refused naming its index", `{"instructions":[{"kind":5}]}`, `instructions[0]: field "kind"`},
		{"a comment of the wrong type is refused naming the field", `{"comment":5,"instructions":[{"kind":"a"}]}`, `"comment"`},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := semanticpatch.Parse([]byte(c.body))
			if !fault.Is(err, fault.Invalid) || !strings.Contains(err.Error(), c.part) {
				t.Errorf("error %v, want invalid naming %q", err, c.part)
			}
		})
	}
}

func TestHasInstructions(t *testing.T) {
	cases := []struct {
		name, body string
		want       bool
	}{
		{"an object with instructions has them", `{"instructions":[]}`, true},
		{"a JSON patch array has none", `[{"op":"replace","path":"/name","value":"x"}]`, false},
		{"an object without them has none", `{"comment":"x"}`, false},
		{"an object with null instructions is one, for Parse to say they are required", `{"instructions":null}`, true},
		{"text has none", `instructions`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := semanticpatch.HasInstructions([]byte(c.body)); got != c.want {
				t.Errorf("HasInstructions(%s) = %v", c.body, got)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	in := semanticpatch.New("addUserTargets", map[string]any{"values": "u1"})
	t.Run("a parameter of the wrong type is refused naming instructions[i].field", func(t *testing.T) {
		var p struct {
			Values []string `json:"values"`
		}
		err := semanticpatch.Decode(in, 3, &p)
		if !fault.Is(err, fault.Invalid) || !strings.Contains(err.Error(), "instructions[3].values") {
			t.Errorf("error %v", err)
		}
		if i, ok := semanticpatch.IndexOf(err); !ok || i != 3 {
			t.Errorf("IndexOf = %d, %v", i, ok)
		}
	})
	cases := []struct {
		name     string
		err      error
		code     fault.Code
		message  string
		reason   string
		hasIndex bool
	}{
		{"Invalid is a 400 whose message names index and kind", semanticpatch.Invalid(2, "fly", "no such kind"), fault.Invalid,
			"instructions[2] (fly): no such kind", "no such kind", true},
		{"Failed is a 422", semanticpatch.Failed(0, "removeRule", "rule %q not found", "r1"), fault.PatchFailed,
			`instructions[0] (removeRule): rule "r1" not found`, `rule "r1" not found`, true},
		{"an instruction without a kind is named by index alone", semanticpatch.Invalid(4, "", "must be an object"), fault.Invalid,
			"instructions[4]: must be an object", "must be an object", true},
		{"At keeps a fault's code and names the instruction", semanticpatch.At(fault.New(fault.Invalid, "bad value"), 1, "updateName", false), fault.Invalid,
			"instructions[1] (updateName): bad value", "bad value", true},
		{"At turns an invalid result into a failed patch when asked", semanticpatch.At(fault.New(fault.Invalid, "too many rules"), 1, "addRule", true), fault.PatchFailed,
			"instructions[1] (addRule): too many rules", "too many rules", true},
		{"At passes an instruction error through unchanged", semanticpatch.At(semanticpatch.Failed(5, "x", "gone"), 1, "y", false), fault.PatchFailed,
			"instructions[5] (x): gone", "gone", true},
		{"At leaves an internal failure as it is", semanticpatch.At(errors.New("disk on fire"), 1, "y", true), fault.Internal,
			"an internal error occurred", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if code, msg := fault.CodeOf(c.err), fault.MessageOf(c.err); code != c.code || msg != c.message {
				t.Errorf("code %s, message %q; want %s, %q", code, msg, c.code, c.message)
			}
			var se *semanticpatch.Error
			if ok := errors.As(c.err, &se); ok != c.hasIndex || ok && se.Reason() != c.reason {
				t.Errorf("instruction error %v (%v), want reason %q", se, ok, c.reason)
			}
		})
	}
	t.Run("At of nil is nil", func(t *testing.T) {
		if err := semanticpatch.At(nil, 0, "k", true); err != nil {
			t.Errorf("At(nil) = %v", err)
		}
	})
}
