package destination

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/flagplane/flagplane/shared/audit"
	"github.com/flagplane/flagplane/shared/fault"
	"github.com/flagplane/flagplane/shared/identity"
	"github.com/flagplane/flagplane/shared/record"
	"github.com/flagplane/flagplane/shared/store"
)

// SetupResult answers a setup request.
type SetupResult struct {
	Script         string `json:"script"`
	PublicKey      string `json:"publicKey,omitempty"`
	PublicKeyPkcs8 string `json:"publicKeyPkcs8,omitempty"`
	// The Redshift role's policies, when the cluster is named.
	RedshiftIAMPermissionsPolicy string `json:"redshiftIAMPermissionsPolicy,omitempty"`
	RedshiftIAMTrustPolicy       string `json:"redshiftIAMTrustPolicy,omitempty"`
	S3BucketName                 string `json:"s3BucketName,omitempty"`
}

// Pending is a setup waiting for complete-setup: the names the script
// was made with (no password) and, for snowflake-v2, its key pair.
type Pending struct {
	Kind        string `json:"kind"`
	Name        string `json:"name,omitempty"`
	Config      Config `json:"config"`
	Fingerprint string `json:"fingerprint,omitempty"`
	CreatedAt   int64  `json:"createdAt"`
}

// MaxPasswordLength bounds a ClickHouse password sent to setup.
const MaxPasswordLength = 256

// Setup makes the setup script of a kind of warehouse for an environment
// and keeps what it was made with until complete-setup; for snowflake-v2
// it generates the key pair the script gives the warehouse user. A new
// setup of the same kind replaces the pending one.
func (s *Service) Setup(ctx context.Context, projectKey, envKey, kind string, body json.RawMessage) (*SetupResult, error) {
	if err := CheckKind("path parameter \"kind\"", kind); err != nil {
		return nil, err
	}
	var in map[string]any
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		if err := dec.Decode(&in); err != nil {
			return nil, fault.New(fault.Invalid, "request body must be a JSON object of the custom names")
		}
	}
	name, _ := in["name"].(string)
	if v, ok := in["name"]; ok && v != nil {
		if _, isString := v.(string); !isString {
			return nil, fault.New(fault.Invalid, "field \"name\" must be a string")
		}
	}
	if len(name) > MaxNameLength {
		return nil, fault.New(fault.Invalid, "field \"name\" must be at most %d characters", MaxNameLength)
	}
	password, err := takePassword(kind, in)
	if err != nil {
		return nil, err
	}
	delete(in, "name")
	if _, ok := in["publicKey"]; ok && kind == KindSnowflake {
		return nil, fault.New(fault.Invalid, "field \"publicKey\" is not taken here: the setup generates the key pair and answers its public key")
	}
	cfg := Config(in)
	if cfg == nil {
		cfg = Config{}
	}
	if err := checkConfig(kind, cfg, "", false); err != nil {
		return nil, err
	}
	if kind == KindBigQuery && cfg.Str("projectId", "") == "" {
		return nil, fault.New(fault.Invalid, "field \"projectId\" is required for a bigquery setup: the Google Cloud project the dataset is created in")
	}
	env, err := s.envs.Get(ctx, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	pending := &Pending{Kind: kind, Name: name, Config: cfg, CreatedAt: s.now().UnixMilli()}
	in2 := scriptInput{kind: kind, names: cfg, projectKey: projectKey, envKey: envKey, envID: env.ID, stage: s.stage, password: password}
	res := &SetupResult{}
	var writes []store.Write
	if kind == KindSnowflake {
		k, err := s.generate(projectKey, envKey)
		if err != nil {
			return nil, err
		}
		put, err := k.put()
		if err != nil {
			return nil, err
		}
		writes = append(writes, put)
		pending.Fingerprint = k.Fingerprint
		in2.publicKey = k.PublicKey
		pub := k.Public()
		res.PublicKey, res.PublicKeyPkcs8 = pub.PEM, pub.Body
	}
	if kind == KindClickHouse || kind == KindRedshift {
		res.S3BucketName = s.stage.Name()
	}
	if kind == KindRedshift {
		if _, ok := redshiftRole(in2); ok {
			res.RedshiftIAMPermissionsPolicy = encodePolicy(readPolicy(s.stage, env.ID))
			res.RedshiftIAMTrustPolicy = encodePolicy(redshiftTrust(in2))
		}
	}
	res.Script = script(in2)
	data, err := json.Marshal(pending)
	if err != nil {
		return nil, fmt.Errorf("encode pending setup: %w", err)
	}
	pk := store.DestinationSetupKey(projectKey, envKey, kind)
	// A new setup replaces the pending one with a new version, so a
	// complete-setup that read the old one cannot consume this one.
	writes = append(writes, store.Put(store.Item{PK: pk.PK, SK: pk.SK, Version: s.now().UnixNano(), Data: data}, store.Cond{}),
		store.Check(store.EnvironmentKey(projectKey, envKey), store.IfExists()))
	if _, err := s.log.Commit(ctx, audit.Change{Kind: "destination", Writes: writes, Resource: Resource(projectKey, envKey, "*"), Actions: []string{"createDestination"},
		Name: kind + " setup", Href: "/api/v2/destinations/projects/" + projectKey + "/environments/" + envKey + "/kinds/" + kind + "/setup",
		TitleVerb: "generated the setup script of the warehouse destination", Parent: envParent(projectKey, envKey), Current: pending,
		Conflict: fmt.Sprintf("environment %q of project %q was changed by another request; try again", envKey, projectKey)}); err != nil {
		return nil, err
	}
	return res, nil
}

// takePassword removes the ClickHouse password from a setup body: it goes
// into the script answered once and is never stored.
func takePassword(kind string, in map[string]any) (string, error) {
	raw, ok := in["clickHousePassword"]
	if !ok {
		return "", nil
	}
	delete(in, "clickHousePassword")
	if kind != KindClickHouse {
		return "", fault.New(fault.Invalid, "field \"clickHousePassword\" applies to clickhouse setups only")
	}
	pw, isString := raw.(string)
	if !isString {
		return "", fault.New(fault.Invalid, "field \"clickHousePassword\" must be a string")
	}
	if len(pw) > MaxPasswordLength || strings.ContainsFunc(pw, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fault.New(fault.Invalid, "field \"clickHousePassword\" must be at most %d characters without control characters", MaxPasswordLength)
	}
	return pw, nil
}

// CompleteInput is the body of complete-setup: the public key the setup
// answered (either form) and the warehouse's address.
type CompleteInput struct {
	PublicKey            string `json:"publicKey"`
	SnowflakeHostAddress string `json:"snowflakeHostAddress"`
	Endpoint             string `json:"endpoint"`
	Host                 string `json:"host"`
}

func (in CompleteInput) host(kind string) string {
	switch kind {
	case KindSnowflake:
		return in.SnowflakeHostAddress
	case KindClickHouse:
		return in.Endpoint
	case KindDatabricks:
		return in.Host
	}
	return ""
}

// CompleteSetup turns the pending setup of kind into a destination that
// is on, after checking that the host and public key sent are the ones
// the setup was made with; its completedArtifacts hold the script (rebuilt
// from the stored names) and the stage.
func (s *Service) CompleteSetup(ctx context.Context, projectKey, envKey, kind string, in CompleteInput) (*Destination, error) {
	if err := CheckKind("path parameter \"kind\"", kind); err != nil {
		return nil, err
	}
	env, err := s.envs.Get(ctx, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	pk := store.DestinationSetupKey(projectKey, envKey, kind)
	var version int64
	pending, err := record.Load(ctx, s.table, pk, fmt.Sprintf("pending %s setup in environment %q of project %q (generate the setup script first)", kind, envKey, projectKey),
		func(it store.Item) (*Pending, error) {
			var p Pending
			version = it.Version
			return &p, json.Unmarshal(it.Data, &p)
		})
	if err != nil {
		return nil, err
	}
	cfg := Config{}
	for k, v := range pending.Config {
		cfg[k] = v
	}
	if field, ok := hostField[kind]; ok {
		sent := strings.TrimSpace(in.host(kind))
		if err := checkConfig(kind, Config{field: sent}, "", false); err != nil && sent != "" {
			return nil, err
		}
		switch had := pending.Config.Str(field, ""); {
		case sent == "" && had == "":
			return nil, fault.New(fault.Invalid, "field %q is required: the address of the warehouse", field)
		case sent != "" && had != "" && !strings.EqualFold(sent, had):
			return nil, fault.New(fault.Invalid, "field %q is %s but the setup script was generated for %s", field, quote(sent), quote(had))
		case sent != "":
			cfg[field] = sent
		}
	}
	if kind == KindSnowflake {
		if in.PublicKey == "" {
			return nil, fault.New(fault.Invalid, "field \"publicKey\" is required: the public key the setup answered")
		}
		der, err := ParsePublicKey("publicKey", in.PublicKey)
		if err != nil {
			return nil, err
		}
		if Fingerprint(der) != pending.Fingerprint {
			return nil, fault.New(fault.Invalid, "field \"publicKey\" is not the public key of the latest %s setup of this environment", kind)
		}
		cfg["publicKey"] = in.PublicKey // validate keeps its bare form
	} else if in.PublicKey != "" {
		return nil, fault.New(fault.Invalid, "field \"publicKey\" applies to snowflake-v2 setups only")
	}
	p, _ := identity.From(ctx)
	d := &Destination{ID: uuid.NewString(), ProjectKey: projectKey, EnvKey: envKey, EnvID: env.ID, Name: pending.Name, Kind: kind,
		Config: cfg, On: true, CreatedAt: s.now().UnixMilli(), MaintainerID: p.MemberID, Version: 1}
	if err := s.validate(ctx, d); err != nil {
		return nil, err
	}
	d.CompletedArtifacts = &Artifacts{
		SQLSetupScript: script(scriptInput{kind: kind, names: d.Config, projectKey: projectKey, envKey: envKey, envID: env.ID, stage: s.stage, publicKey: d.Config.Str("publicKey", "")}),
		S3BucketName:   s.stage.Name(),
	}
	if err := s.commitNew(ctx, env, d, []store.Write{store.Delete(pk, store.IfVersion(version))}, "completed the setup of the destination"); err != nil {
		return nil, err
	}
	return d, nil
}

// TrustPolicy is the answer of generate-trust-policy.
type TrustPolicy struct {
	AWSTrustPolicy Policy `json:"awsTrustPolicy"`
}

// TrustPolicy makes the trust policy of the role a warehouse assumes to
// read an environment's part of the S3 stage: the stage's account may
// assume it (narrow the principal to the warehouse's once known) with an
// external id only flagplane derives, fixed per environment.
func (s *Service) TrustPolicy(ctx context.Context, projectKey, envKey string) (*TrustPolicy, error) {
	env, err := s.envs.Get(ctx, projectKey, envKey)
	if err != nil {
		return nil, err
	}
	if s.sealer == nil {
		return nil, fault.New(fault.Internal, "no key-encryption secret is configured (%s): external ids derive from it", EnvKeySecret)
	}
	account := s.stage.AccountID
	if account == "" {
		account = "<the AWS account of your bucket>"
	}
	return &TrustPolicy{AWSTrustPolicy: Policy{Version: "2012-10-17", Statement: []PolicyStatement{{
		Effect: "Allow", Action: []string{"sts:AssumeRole"},
		Principal: map[string]any{"AWS": "arn:aws:iam::" + account + ":root"},
		Condition: map[string]any{"StringEquals": map[string]any{"sts:ExternalId": ExternalIDPrefix + s.sealer.derive("trust:"+env.ID)}},
	}}}}, nil
}

// ExternalIDPrefix starts every external id flagplane derives.
const ExternalIDPrefix = "flagplane-"
