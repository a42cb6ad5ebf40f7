package featurestore

import (
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"

	"github.com/flagplane/flagplane/shared/fault"
)

// The stores a configuration can keep filled (the path's integrationKey).
const (
	Redis    = "redis"
	DynamoDB = "dynamodb"
)

// Mask replaces a secret config value in every read, audit entry and log.
const Mask = "********"

// Settings are a configuration's config fields, decoded: what a store
// writer needs to connect. The JSON names are the API's config fields.
type Settings struct {
	// Prefix starts every key (Redis) or namespace (DynamoDB), as the
	// SDK's store option of the same name; SDKs must use the same one.
	Prefix string

	// Redis.
	Host     string
	Port     int
	Username string
	Password string
	TLS      bool
	Database int

	// DynamoDB.
	TableName       string
	Region          string
	RoleARN         string
	ExternalID      string
	AccessKeyID     string
	SecretAccessKey string
	// Endpoint overrides the DynamoDB endpoint (DynamoDB Local, LocalStack).
	Endpoint string
}

type fieldType int

const (
	textField fieldType = iota
	intField
	boolField
)

// field describes one config field of one store.
type field struct {
	name     string
	typ      fieldType
	required bool
	secret   bool
	// def is the value a create without the field gets.
	def any
	// check, optional, refuses a bad value with the reason.
	check func(v any) string
}

// maxText bounds every text config value.
const maxText = 1024

var fields = map[string][]field{
	Redis: {
		{name: "host", typ: textField, required: true, check: hostname},
		{name: "port", typ: intField, def: 6379, check: between(1, 65535)},
		{name: "username", typ: textField},
		{name: "password", typ: textField, secret: true},
		{name: "tls", typ: boolField, def: false},
		{name: "database", typ: intField, def: 0, check: between(0, 1<<20)},
		// The Redis integration's default prefix, so SDKs left at their defaults read it.
		{name: "prefix", typ: textField, def: "launchdarkly", check: prefixCheck},
	},
	DynamoDB: {
		{name: "tableName", typ: textField, required: true, check: tableName},
		{name: "region", typ: textField, required: true, check: region},
		// The DynamoDB integration's default is no prefix.
		{name: "prefix", typ: textField, def: "", check: prefixCheck},
		{name: "roleArn", typ: textField, check: roleARN},
		{name: "externalId", typ: textField},
		{name: "accessKeyId", typ: textField},
		{name: "secretAccessKey", typ: textField, secret: true},
		{name: "endpoint", typ: textField, check: endpointURL},
	},
}

// Stores are the integration keys configurations accept, sorted.
func Stores() []string { return []string{DynamoDB, Redis} }

// checkStore refuses an integration key that is not a store.
func checkStore(key string) error {
	if _, ok := fields[key]; !ok {
		return fault.New(fault.Invalid, "integrationKey %q is not supported: use one of %s", key, strings.Join(Stores(), ", "))
	}
	return nil
}

// normalize checks config against the store's fields and returns it with
// defaults filled in: an unknown field, a missing required one or a value
// of the wrong type is a 400 naming the field.
func normalize(store string, config map[string]any) (map[string]any, error) {
	spec := fields[store]
	known := map[string]bool{}
	for _, f := range spec {
		known[f.name] = true
	}
	var unknown []string
	for k := range config {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, len(spec))
		for i, f := range spec {
			names[i] = f.name
		}
		return nil, fault.New(fault.Invalid, "config field %q is not a %s setting: the fields are %s", unknown[0], store, strings.Join(names, ", "))
	}
	out := make(map[string]any, len(spec))
	for _, f := range spec {
		v, ok := config[f.name]
		if !ok || v == nil {
			if f.required {
				return nil, fault.New(fault.Invalid, "config field %q is required for %s", f.name, store)
			}
			if f.def != nil {
				out[f.name] = f.def
			}
			continue
		}
		switch f.typ {
		case textField:
			s, ok := v.(string)
			if !ok {
				return nil, fault.New(fault.Invalid, "config field %q must be a string", f.name)
			}
			if len(s) > maxText {
				return nil, fault.New(fault.Invalid, "config field %q is longer than %d characters", f.name, maxText)
			}
			if f.required && strings.TrimSpace(s) == "" {
				return nil, fault.New(fault.Invalid, "config field %q may not be empty", f.name)
			}
			v = s
		case intField:
			n, ok := v.(float64)
			if i, isInt := v.(int); isInt {
				n, ok = float64(i), true
			}
			if !ok || n != math.Trunc(n) {
				return nil, fault.New(fault.Invalid, "config field %q must be an integer", f.name)
			}
			v = int(n)
		case boolField:
			if _, ok := v.(bool); !ok {
				return nil, fault.New(fault.Invalid, "config field %q must be true or false", f.name)
			}
		}
		if f.check != nil {
			if s, isText := v.(string); !isText || s != "" {
				if why := f.check(v); why != "" {
					return nil, fault.New(fault.Invalid, "config field %q %s", f.name, why)
				}
			}
		}
		out[f.name] = v
	}
	if store == DynamoDB && (out["accessKeyId"] == nil) != (out["secretAccessKey"] == nil) {
		return nil, fault.New(fault.Invalid, "config fields \"accessKeyId\" and \"secretAccessKey\" go together: give both or neither")
	}
	if store == DynamoDB && out["externalId"] != nil && out["roleArn"] == nil {
		return nil, fault.New(fault.Invalid, "config field \"externalId\" needs \"roleArn\": it is passed when the role is assumed")
	}
	return out, nil
}

// masked returns config with every secret value replaced by Mask.
func masked(store string, config map[string]any) map[string]any {
	out := make(map[string]any, len(config))
	for k, v := range config {
		out[k] = v
	}
	for _, f := range fields[store] {
		if s, ok := out[f.name].(string); ok && f.secret && s != "" {
			out[f.name] = Mask
		}
	}
	return out
}

// keepSecrets puts back the stored secrets a patched config still shows
// masked: a patch sees the masked config, and leaving a secret alone must
// not replace it with the mask.
func keepSecrets(store string, next, stored map[string]any) {
	for _, f := range fields[store] {
		if f.secret && next[f.name] == Mask {
			next[f.name] = stored[f.name]
		}
	}
}

// isSecret reports whether a config field of the store is secret.
func isSecret(store, name string) bool {
	for _, f := range fields[store] {
		if f.name == name {
			return f.secret
		}
	}
	return false
}

// SettingsOf decodes a normalized config.
func SettingsOf(config map[string]any) Settings {
	text := func(k string) string { s, _ := config[k].(string); return s }
	num := func(k string) int {
		switch n := config[k].(type) {
		case int:
			return n
		case float64:
			return int(n)
		}
		return 0
	}
	tls, _ := config["tls"].(bool)
	return Settings{
		Prefix: text("prefix"),
		Host:   text("host"), Port: num("port"), Username: text("username"), Password: text("password"), TLS: tls, Database: num("database"),
		TableName: text("tableName"), Region: text("region"), RoleARN: text("roleArn"), ExternalID: text("externalId"),
		AccessKeyID: text("accessKeyId"), SecretAccessKey: text("secretAccessKey"), Endpoint: text("endpoint"),
	}
}

// destination is the config field naming where the store's connections
// go, and the host in it ("" when the store's own default applies).
func destination(store string, config map[string]any) (field, host string) {
	switch store {
	case Redis:
		h, _ := config["host"].(string)
		return "host", h
	case DynamoDB:
		raw, _ := config["endpoint"].(string)
		if raw == "" {
			return "endpoint", ""
		}
		u, err := url.Parse(raw)
		if err != nil {
			return "endpoint", raw // normalize refused it already
		}
		return "endpoint", u.Hostname()
	}
	return "", ""
}

func between(lo, hi int) func(any) string {
	return func(v any) string {
		if n := v.(int); n < lo || n > hi {
			return fmt.Sprintf("must be between %d and %d", lo, hi)
		}
		return ""
	}
}

func hostname(v any) string {
	s := v.(string)
	if strings.ContainsAny(s, " /?#@") {
		return "must be a host name or IP address, without scheme, port or path"
	}
	return ""
}

func prefixCheck(v any) string {
	if strings.ContainsAny(v.(string), " \t\r\n") {
		return "may not contain white space"
	}
	return ""
}

func tableName(v any) string {
	s := v.(string)
	if len(s) < 3 || len(s) > 255 {
		return "must be 3 to 255 characters long"
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return "may hold only letters, digits, '_', '-' and '.'"
		}
	}
	return ""
}

func region(v any) string {
	for _, c := range v.(string) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return "must be an AWS region such as us-east-1"
		}
	}
	return ""
}

func roleARN(v any) string {
	if !strings.HasPrefix(v.(string), "arn:") || !strings.Contains(v.(string), ":role/") {
		return "must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)"
	}
	return ""
}

func endpointURL(v any) string {
	u, err := url.Parse(v.(string))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "must be an http or https URL"
	}
	return ""
}
