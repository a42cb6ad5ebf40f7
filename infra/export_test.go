package infra

import (
	"testing"

	"github.com/flagplane/flagplane/shared/destination"
)

// exportPut is the one grant on the stage bucket: the export worker puts
// objects under the events/ prefix.
func exportPut(ids stackIDs) grant {
	return grant{"s3:PutObject", ids.exportBucket + ".Arn/" + destination.EventsPrefix + "*", ""}
}

// withExportEnv adds to env what Spec.Env passes a function about the data
// export: the stage bucket and its account, and the key-sealing secret.
func withExportEnv(tb testing.TB, tpl *template, s Spec, env map[string]string) map[string]string {
	tb.Helper()
	bucket, _ := tpl.only(tb, "AWS::S3::Bucket")
	secret, _ := tpl.only(tb, "AWS::SecretsManager::Secret")
	if s.NamesExportStage || s.WritesExportStage {
		env[destination.EnvExportBucket] = bucket
		env[destination.EnvExportAccount] = "AWS::AccountId"
	}
	if s.SealsDestinationKeys {
		env[destination.EnvKeySecret] = "{{resolve:secretsmanager:" + secret + ":SecretString:::}}"
	}
	return env
}

func TestExportStage(t *testing.T) {
	// GIVEN the stack as deployed by default
	tpl := defaultTemplate(t)
	bucketID, bucket := tpl.only(t, "AWS::S3::Bucket")
	p := bucket.Properties

	// THEN the stage bucket is private, encrypted, TLS only, and forgets batches
	t.Run("every kind of public access is blocked", func(t *testing.T) {
		block := p["PublicAccessBlockConfiguration"].(map[string]any)
		for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
			if block[k] != true {
				t.Errorf("%s is %v", k, block[k])
			}
		}
	})
	t.Run("objects are encrypted at rest with S3's keys", func(t *testing.T) {
		rules := list(prop(p, "BucketEncryption", "ServerSideEncryptionConfiguration"))
		if len(rules) != 1 || render(prop(rules[0].(map[string]any), "ServerSideEncryptionByDefault", "SSEAlgorithm")) != "AES256" {
			t.Errorf("encryption %v", p["BucketEncryption"])
		}
	})
	t.Run("objects belong to the bucket owner: no ACLs", func(t *testing.T) {
		rules := list(prop(p, "OwnershipControls", "Rules"))
		if len(rules) != 1 || rules[0].(map[string]any)["ObjectOwnership"] != "BucketOwnerEnforced" {
			t.Errorf("ownership %v", p["OwnershipControls"])
		}
	})
	t.Run("a lifecycle rule expires exported batches and stale uploads", func(t *testing.T) {
		rules := list(prop(p, "LifecycleConfiguration", "Rules"))
		if len(rules) != 1 {
			t.Fatalf("rules %v", rules)
		}
		r := rules[0].(map[string]any)
		if r["Status"] != "Enabled" || r["ExpirationInDays"] != float64(ExportRetention) || r["Prefix"] != destination.EventsPrefix ||
			prop(r, "AbortIncompleteMultipartUpload", "DaysAfterInitiation") != float64(1) {
			t.Errorf("rule %v", r)
		}
	})
	t.Run("its policy refuses every request without TLS", func(t *testing.T) {
		found := false
		for _, id := range tpl.ofType("AWS::S3::BucketPolicy") {
			bp := tpl.Resources[id].Properties
			if render(bp["Bucket"]) != bucketID {
				continue
			}
			for _, st := range list(prop(bp, "PolicyDocument", "Statement")) {
				m := st.(map[string]any)
				if m["Effect"] == "Deny" && render(prop(m, "Condition", "Bool", "aws:SecureTransport")) == "false" {
					found = true
				}
			}
		}
		if !found {
			t.Error("no statement denies requests without TLS")
		}
	})
	t.Run("the stage bucket and the key secret are kept when the stack goes", func(t *testing.T) {
		for _, typ := range []string{"AWS::S3::Bucket", "AWS::SecretsManager::Secret"} {
			_, r := tpl.only(t, typ)
			if r.DeletionPolicy != "Retain" {
				t.Errorf("%s: deletion policy %q", typ, r.DeletionPolicy)
			}
		}
	})
	t.Run("only the export worker may write the stage, and only the destinations function gets the secret", func(t *testing.T) {
		for _, s := range Specs() {
			if s.WritesExportStage != (s.Name == "destinations-export") {
				t.Errorf("%s writes the stage: %v", s.Name, s.WritesExportStage)
			}
			if s.SealsDestinationKeys != (s.Name == DestinationsGroup) {
				t.Errorf("%s gets the key secret: %v", s.Name, s.SealsDestinationKeys)
			}
		}
	})
}
