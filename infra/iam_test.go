package infra

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/flagplane/flagplane/shared/store"
)

// grant is one action on one resource under one condition, the unit in
// which the tests compare what a role may do with what it needs.
type grant struct {
	Action, Resource, Condition string
}

func (g grant) String() string {
	s := g.Action + " on " + g.Resource
	if g.Condition != "" {
		s += " if " + g.Condition
	}
	return s
}

// stackIDs are the logical ids the expected grants refer to.
type stackIDs struct {
	table, queue, ingest string
	streamDLQ            string            // the audit stream's dead-letter queue
	exportBucket         string            // the data export's stage, when the stack has one
	logs                 map[string]string // function name -> its log group
}

func idsOf(tb testing.TB, tpl *template) stackIDs {
	tb.Helper()
	table, _ := tpl.only(tb, "AWS::DynamoDB::Table")
	ids := stackIDs{table: table, queue: webhookQueue(tb, tpl), ingest: ingestQueue(tb, tpl), logs: map[string]string{}}
	for _, id := range tpl.ofType("AWS::SQS::Queue") {
		if strings.HasPrefix(id, "AuditStreamDeadLetterQueue") {
			ids.streamDLQ = id
		}
	}
	if buckets := tpl.ofType("AWS::S3::Bucket"); len(buckets) == 1 {
		ids.exportBucket = buckets[0]
	}
	for name, fn := range tpl.functions(tb) {
		ids.logs[name] = render(prop(tpl.Resources[fn].Properties, "LoggingConfig", "LogGroup"))
	}
	return ids
}

// metaOnly is the condition that confines a write to the META partition.
var metaOnly = fmt.Sprintf(`{"ForAllValues:StringEquals":{"dynamodb:LeadingKeys":[%q]}}`, store.MetaKey("").PK)

// needs is everything the function of s must be able to do, and so all it may.
func needs(s Spec, ids stackIDs) map[grant]bool {
	table := ids.table + ".Arn"
	index := table + "/index/" + store.IndexGSI1
	queue := ids.queue + ".Arn"
	out := map[grant]bool{
		{"logs:CreateLogStream", ids.logs[s.Name] + ".Arn", ""}: true,
		{"logs:PutLogEvents", ids.logs[s.Name] + ".Arn", ""}:    true,
		{"dynamodb:GetItem", table, ""}:                         true,
		{"dynamodb:Query", table, ""}:                           true,
		{"dynamodb:Query", index, ""}:                           true,
	}
	switch s.Access {
	case ReadWrite:
		for _, a := range []string{"dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"} {
			out[grant{a, table, ""}] = true
		}
	case ReadOnly:
		out[grant{"dynamodb:PutItem", table, metaOnly}] = true
	}
	if s.PublishesWebhooks {
		out[grant{"sqs:SendMessage", queue, ""}] = true
	}
	if s.ConsumesWebhookQueue {
		for _, a := range []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl", "sqs:DeleteMessage", "sqs:GetQueueAttributes"} {
			out[grant{a, queue, ""}] = true
		}
	}
	if s.PublishesIngest {
		out[grant{"sqs:SendMessage", ids.ingest + ".Arn", ""}] = true
	}
	if s.ConsumesIngestQueue {
		for _, a := range []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl", "sqs:DeleteMessage", "sqs:GetQueueAttributes"} {
			out[grant{a, ids.ingest + ".Arn", ""}] = true
		}
	}
	if s.WritesExportStage {
		out[exportPut(ids)] = true
	}
	if s.ConsumesAuditStream {
		// What Lambda's event source mapping reads the stream with, and
		// sends the spans of failed batches to the dead-letter queue with;
		// then what the second mapping consumes that queue with, for the
		// function to redrive them.
		for _, a := range []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"} {
			out[grant{a, ids.table + ".StreamArn", ""}] = true
		}
		out[listStreams] = true
		for _, a := range []string{"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl",
			"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage"} {
			out[grant{a, ids.streamDLQ + ".Arn", ""}] = true
		}
	}
	return out
}

// listStreams is the one action granted on every resource: DynamoDB's
// ListStreams names no resource (IAM allows it only on "*"), and Lambda's
// event source mapping calls it to find the table's stream.
var listStreams = grant{"dynamodb:ListStreams", "*", ""}

// grantsOf reads every statement of every policy attached to each
// function's role, inline or separate, as grants by function name. A
// statement that could widen access in ways grants cannot express
// (Deny aside, NotAction, NotResource) fails the test.
func grantsOf(t *testing.T, tpl *template) map[string]map[grant]bool {
	t.Helper()
	byRole := grantsByRole(t, tpl)
	out := map[string]map[grant]bool{}
	for name, fn := range tpl.functions(t) {
		role, _ := strings.CutSuffix(render(tpl.Resources[fn].Properties["Role"]), ".Arn")
		out[name] = byRole[role]
	}
	return out
}

// grantsByRole reads every statement of every policy attached to each
// role of the template, inline or separate, as grants by the role's
// logical id; see grantsOf.
func grantsByRole(t *testing.T, tpl *template) map[string]map[grant]bool {
	t.Helper()
	byRole := map[string]map[grant]bool{}
	add := func(role string, doc any) {
		if byRole[role] == nil {
			byRole[role] = map[grant]bool{}
		}
		for _, st := range list(prop(map[string]any{"d": doc}, "d", "Statement")) {
			s, _ := st.(map[string]any)
			if s["NotAction"] != nil || s["NotResource"] != nil || s["NotPrincipal"] != nil {
				t.Errorf("role %s: statement with Not*: %v", role, s)
			}
			if s["Effect"] != "Allow" {
				continue // a Deny only narrows
			}
			cond := ""
			if c := s["Condition"]; c != nil {
				cond = render(c)
			}
			for _, a := range strs(s["Action"]) {
				for _, r := range strs(s["Resource"]) {
					byRole[role][grant{a, r, cond}] = true
				}
			}
		}
	}
	for _, id := range tpl.ofType("AWS::IAM::Policy") {
		p := tpl.Resources[id].Properties
		for _, role := range strs(p["Roles"]) {
			add(role, p["PolicyDocument"])
		}
	}
	for _, id := range tpl.ofType("AWS::IAM::Role") {
		for _, pol := range list(tpl.Resources[id].Properties["Policies"]) {
			m, _ := pol.(map[string]any)
			add(id, m["PolicyDocument"])
		}
	}
	return byRole
}

func sortedGrants(m map[grant]bool) []string {
	var out []string
	for g := range m {
		out = append(out, g.String())
	}
	sort.Strings(out)
	return out
}

// checkLeastPrivilege fails if any function of specs may do more than its
// spec needs, or less, or if anything in the template hands out broad
// rights.
func checkLeastPrivilege(t *testing.T, tpl *template, specs []Spec) {
	t.Helper()
	ids := idsOf(t, tpl)
	grants := grantsOf(t, tpl)
	tableWrites := []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:PartiQLInsert", "dynamodb:PartiQLUpdate", "dynamodb:PartiQLDelete"}

	t.Run("no policy grants a wildcard action or resource", func(t *testing.T) {
		for name, gs := range grants {
			for g := range gs {
				// Objects under the export prefix are the one resource a
				// pattern names: S3 objects have no other ARN.
				if g != exportPut(ids) && g != listStreams && (strings.Contains(g.Action, "*") || strings.Contains(g.Resource, "*")) {
					t.Errorf("function %s may %s", name, g)
				}
			}
		}
	})
	t.Run("no role has a managed policy, so none grants full access", func(t *testing.T) {
		for _, id := range tpl.ofType("AWS::IAM::Role") {
			if arns := strs(tpl.Resources[id].Properties["ManagedPolicyArns"]); len(arns) > 0 {
				t.Errorf("role %s has managed policies %v", id, arns)
			}
		}
		for _, typ := range []string{"AWS::IAM::ManagedPolicy", "AWS::IAM::User", "AWS::IAM::Group"} {
			if ids := tpl.ofType(typ); len(ids) > 0 {
				t.Errorf("unexpected %s: %v", typ, ids)
			}
		}
	})
	t.Run("every function's role is assumed by Lambda only", func(t *testing.T) {
		for _, id := range tpl.ofType("AWS::IAM::Role") {
			doc := prop(tpl.Resources[id].Properties, "AssumeRolePolicyDocument")
			for _, st := range list(prop(map[string]any{"d": doc}, "d", "Statement")) {
				if p := render(prop(st.(map[string]any), "Principal", "Service")); p != "lambda.amazonaws.com" {
					t.Errorf("role %s is assumed by %s", id, p)
				}
			}
		}
	})
	t.Run("read-only functions write the table only to create the META cursor secret", func(t *testing.T) {
		readOnly := 0
		for _, s := range specs {
			if s.Access != ReadOnly {
				continue
			}
			readOnly++
			for g := range grants[s.Name] {
				if slices.Contains(tableWrites, g.Action) && (g.Action != "dynamodb:PutItem" || g.Condition != metaOnly) {
					t.Errorf("read-only function %s may %s", s.Name, g)
				}
				if g.Action == "dynamodb:ConditionCheckItem" {
					t.Errorf("read-only function %s may %s", s.Name, g)
				}
			}
		}
		if readOnly == 0 {
			t.Fatal("no read-only function, so this test proves nothing")
		}
	})
	t.Run("only functions that publish may send to the webhook queue", func(t *testing.T) {
		for _, s := range specs {
			sends := grants[s.Name][grant{"sqs:SendMessage", ids.queue + ".Arn", ""}]
			if sends != s.PublishesWebhooks {
				t.Errorf("function %s (publishes: %v) may send: %v", s.Name, s.PublishesWebhooks, sends)
			}
		}
	})
	for _, s := range specs {
		t.Run(fmt.Sprintf("the %s function (%s) may do exactly what it needs", s.Name, s.Access), func(t *testing.T) {
			want, got := needs(s, ids), grants[s.Name]
			for g := range got {
				if !want[g] {
					t.Errorf("may %s, which it does not need", g)
				}
			}
			for g := range want {
				if !got[g] {
					t.Errorf("may not %s, which it needs", g)
				}
			}
			if t.Failed() {
				t.Logf("granted: %v", sortedGrants(got))
			}
		})
	}
}

func TestStackLeastPrivilege(t *testing.T) {
	// GIVEN the stack synthesized with default props
	tpl := defaultTemplate(t)
	// WHEN every policy attached to each function's role is read
	// THEN each function may do what its group needs and nothing more
	checkLeastPrivilege(t, tpl, Specs())
}

func TestReadOnlyGroupsAreTheAllReadGroups(t *testing.T) {
	// GIVEN the catalog
	// WHEN each group's access is derived
	// THEN a group is read-only exactly when every operation has read scope,
	// and no group publishes webhooks: the table's stream carries changes
	for _, s := range Specs() {
		if !s.API {
			continue
		}
		t.Run("group "+s.Name, func(t *testing.T) {
			if s.Name == IngestGroup {
				t.Skip("the events group only reads credentials and queues payloads: see TestEventsFunctionOnlyQueues")
			}
			access, err := GroupAccess(s.Name)
			if err != nil {
				t.Fatal(err)
			}
			if s.Access != access || s.PublishesWebhooks {
				t.Fatalf("spec %+v, group access %v", s, access)
			}
		})
	}
}

func TestSDKFunctionOnlyReads(t *testing.T) {
	// GIVEN the catalog's sdk group, which serves flag data to LaunchDarkly's SDKs
	// WHEN its function's spec is derived
	spec, ok := SpecOf("sdk")
	// THEN it is an API function that may only read the table and publishes nothing
	if !ok || !spec.API || spec.Access != ReadOnly || spec.PublishesWebhooks {
		t.Fatalf("sdk function spec %+v (found %v), want a read-only API function", spec, ok)
	}
}
