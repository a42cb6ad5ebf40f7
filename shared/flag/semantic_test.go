package flag_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/flag"
	"github.com/flagplane/flagplane/shared/semanticpatch"
)

// The engine as approval requests and expiring targets use it: without
// HTTP, on a flag in memory.

func sample() *flag.Flag {
	on, off := 0, 1
	return &flag.Flag{
		Key: "f", Name: "F", Kind: flag.KindBoolean, Version: 3, ProjectKey: "p", Tags: []string{}, ItemVersion: 3,
		Variations: []flag.Variation{{ID: "yes", Value: json.RawMessage("true")}, {ID: "no", Value: json.RawMessage("false")}},
		Defaults:   flag.Defaults{OnVariation: on, OffVariation: off},
		Environments: map[string]*flag.EnvConfig{"prod": {Salt: "s", Version: 2, Targets: []flag.Target{}, ContextTargets: []flag.Target{},
			Rules: []flag.Rule{}, Prerequisites: []flag.Prerequisite{}, Fallthrough: flag.VariationOrRoll{Variation: &on}, OffVariation: &off}},
	}
}

func parse(t *testing.T, body string) []semanticpatch.Instruction {
	t.Helper()
	p, err := semanticpatch.Parse([]byte(body))
	if err != nil {
		t.Fatalf("parse %s: %v", body, err)
	}
	return p.Instructions
}

func TestEngine(t *testing.T) {
	t.Run("InstructionActions maps kinds to policy actions, each once and sorted", func(t *testing.T) {
		got, err := flag.InstructionActions("prod", parse(t, `{"instructions":[{"kind":"turnFlagOn"},{"kind":"addUserTargets"},{"kind":"turnFlagOff"},{"kind":"updateName"}]}`))
		if err != nil || !slices.Equal(got, []string{"updateName", "updateOn", "updateTargets"}) {
			t.Errorf("actions %v, %v", got, err)
		}
	})

	t.Run("InstructionActions refuses an environment-scoped instruction without an environment", func(t *testing.T) {
		_, err := flag.InstructionActions("", parse(t, `{"instructions":[{"kind":"updateName"},{"kind":"turnFlagOn"}]}`))
		if i, ok := semanticpatch.IndexOf(err); !ok || i != 1 || !fault.Is(err, fault.Invalid) {
			t.Errorf("error %v", err)
		}
	})

	t.Run("Validate reports what Apply would and changes nothing", func(t *testing.T) {
		f := sample()
		before, _ := json.Marshal(f)
		ins := parse(t, `{"instructions":[{"kind":"turnFlagOn"},{"kind":"addUserTargets","values":["u"],"variationId":"no"}]}`)
		if err := flag.Validate(f, "prod", ins, time.Now(), nil); err != nil {
			t.Fatalf("validate: %v", err)
		}
		bad := parse(t, `{"instructions":[{"kind":"turnFlagOn"},{"kind":"addUserTargets","values":["u"],"variationId":"maybe"}]}`)
		err := flag.Validate(f, "prod", bad, time.Now(), nil)
		var ie *semanticpatch.Error
		if !errors.As(err, &ie) || ie.Index != 1 || ie.Kind != "addUserTargets" || ie.Code() != fault.PatchFailed {
			t.Errorf("error %#v", err)
		}
		if after, _ := json.Marshal(f); string(after) != string(before) {
			t.Errorf("Validate changed the flag")
		}
	})

	t.Run("Apply changes the flag and the environment's version, not the flag's version", func(t *testing.T) {
		f := sample()
		now := time.UnixMilli(1_700_000_000_000)
		actions, err := flag.Apply(f, "prod", parse(t, `{"instructions":[{"kind":"turnFlagOn"},{"kind":"addUserTargets","values":["u"],"variationId":"no"}]}`), now, nil)
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		c := f.Environments["prod"]
		if !slices.Equal(actions, []string{"updateOn", "updateTargets"}) || !c.On || c.Version != 3 || c.LastModified != now.UnixMilli() {
			t.Errorf("actions %v env %+v", actions, c)
		}
		if v, ok := c.TargetOf("", "u"); !ok || v != 1 {
			t.Errorf("TargetOf u = %d, %v", v, ok)
		}
		if f.Version != 3 || f.ItemVersion != 3 {
			t.Errorf("versions %d %d, the caller bumps them", f.Version, f.ItemVersion)
		}
	})

	t.Run("Apply leaves the flag as it was when an instruction fails", func(t *testing.T) {
		f := sample()
		want := sample()
		_, err := flag.Apply(f, "prod", parse(t, `{"instructions":[{"kind":"turnFlagOn"},{"kind":"removeRule"}]}`), time.Now(), nil)
		if i, ok := semanticpatch.IndexOf(err); !ok || i != 1 || !fault.Is(err, fault.Invalid) {
			t.Errorf("error %v", err)
		}
		if !reflect.DeepEqual(f, want) {
			t.Errorf("the flag changed")
		}
	})

	t.Run("instructions that need other flags refuse to run without them", func(t *testing.T) {
		_, err := flag.Apply(sample(), "prod", parse(t, `{"instructions":[{"kind":"archiveFlag"}]}`), time.Now(), nil)
		if err == nil || fault.CodeOf(err) != fault.Internal {
			t.Errorf("error %v", err)
		}
		if _, err := flag.Apply(sample(), "prod", parse(t, `{"instructions":[{"kind":"archiveFlag"}]}`), time.Now(), flag.Others{}); err != nil {
			t.Errorf("error %v", err)
		}
	})

	t.Run("an instruction made in code runs like one sent", func(t *testing.T) {
		f := sample()
		in := semanticpatch.New("addUserTargets", map[string]any{"values": []string{"u"}, "variationId": "yes"})
		if _, err := flag.Apply(f, "prod", []semanticpatch.Instruction{in}, time.Now(), nil); err != nil {
			t.Fatalf("apply: %v", err)
		}
		rm := semanticpatch.New("removeUserTargets", map[string]any{"values": []string{"u"}, "variationId": "yes"})
		if _, err := flag.Apply(f, "prod", []semanticpatch.Instruction{rm}, time.Now(), nil); err != nil {
			t.Fatalf("apply: %v", err)
		}
		if _, ok := f.Environments["prod"].TargetOf("user", "u"); ok {
			t.Errorf("u is still targeted")
		}
		data, _ := json.Marshal([]semanticpatch.Instruction{in})
		var back []semanticpatch.Instruction
		if err := json.Unmarshal(data, &back); err != nil || back[0].Kind != "addUserTargets" || string(back[0].Raw) != string(in.Raw) {
			t.Errorf("round trip %s -> %+v, %v", data, back, err)
		}
	})
}
