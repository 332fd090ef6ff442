package otlplog

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/zaplens/zaplens/internal/confval"
	"github.com/zaplens/zaplens/internal/launcher"
)

// Resource attribute keys of a distributed job's process, set when a
// launcher's variables are found (see zaplens.LookupRank). They are named as
// torchrun names its variables, since no semantic convention covers them.
const (
	RankKey      = attribute.Key("rank")
	LocalRankKey = attribute.Key("local_rank")
	WorldSizeKey = attribute.Key("world_size")
)

// newResource describes the process: service.name and the rest from
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, host and process
// attributes, the rank, then the options, later sources winning. The
// command line is left out on purpose: training jobs pass tokens and paths
// as arguments, and the resource goes with every export.
func newResource(ctx context.Context, c *providerConfig) (*resource.Resource, error) {
	if c.resource != nil {
		return givenResource(c)
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithOSType(),
		resource.WithProcessPID(),
		resource.WithProcessExecutableName(),
		resource.WithProcessRuntimeName(),
		resource.WithProcessRuntimeVersion(),
		resource.WithAttributes(rankAttributes()...),
		resource.WithAttributes(envAttributes(c)...),
		resource.WithAttributes(optionAttributes(c)...),
	)
	if err != nil && res == nil {
		return nil, err
	}
	// A detector that failed (no hostname, say) only leaves its attributes
	// out: no reason to send no logs at all.
	return withServiceFallback(res)
}

// withServiceFallback adds the spec's unknown_service:<program> to a
// resource that names no service, as resource.Default would.
func withServiceFallback(res *resource.Resource) (*resource.Resource, error) {
	if _, ok := res.Set().Value(semconv.ServiceNameKey); ok {
		return res, nil
	}
	return resource.Merge(res, resource.NewSchemaless(
		semconv.ServiceName("unknown_service:"+filepath.Base(os.Args[0]))))
}

// givenResource is the resource of WithResource, or of a configuration
// file, as the SDK's providers make it (sdk/log's WithResource:
// resource.Merge(resource.Environment(), res)): the environment's
// attributes under the given ones, which win, and the given schema URL,
// since the environment's has none. Nothing is detected, so that logs
// carry the very resource the program's TracerProvider was given and a
// backend joins the two by it. The unknown_service fallback is added to a
// file's resource only (serviceFallback), as otelconf's default resource
// has it; WithResource's gets none. The options still win over all, as
// everywhere.
func givenResource(c *providerConfig) (*resource.Resource, error) {
	res, err := resource.Merge(resource.NewSchemaless(envAttributes(c)...), c.resource)
	if err != nil {
		return nil, err // not reached: the environment's has no schema URL
	}
	if attrs := optionAttributes(c); len(attrs) > 0 {
		if res, err = resource.Merge(res, resource.NewSchemaless(attrs...)); err != nil {
			return nil, err
		}
	}
	if c.serviceFallback {
		return withServiceFallback(res)
	}
	return res, nil
}

// envAttributes are the environment's attributes, as sdk/resource's
// WithFromEnv makes them: OTEL_RESOURCE_ATTRIBUTES's, as the resolver read
// them (none when its value is bad), under OTEL_SERVICE_NAME.
func envAttributes(c *providerConfig) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, len(c.resourceEnv.value)+1)
	for k, v := range c.resourceEnv.value {
		attrs = append(attrs, attribute.String(k, v))
	}
	if name := strings.TrimSpace(os.Getenv("OTEL_SERVICE_NAME")); name != "" {
		attrs = append(attrs, semconv.ServiceName(name))
	}
	return attrs
}

// readResourceAttributes reads OTEL_RESOURCE_ATTRIBUTES as sdk/resource
// reads it, but that a pair the SDK would take half-read, without "=" or
// with a bad percent escape (sent undecoded, a fragment of it printed),
// makes the whole value bad, told without it. A blank value is a pair
// without "=". Invalid UTF-8 is not refused: the encoder repairs it to
// U+FFFD, as it does in records.
func readResourceAttributes(c *providerConfig, v *variable) error {
	parse := func(name, raw string) (map[string]string, error) {
		return confval.ParsePairs(name, raw, confval.ResourceValue)
	}
	return resolve(&c.resourceEnv, v, nil, parse, nil)
}

func rankAttributes() []attribute.KeyValue {
	r, ok := launcher.Lookup()
	if !ok {
		return nil
	}
	attrs := []attribute.KeyValue{RankKey.Int(r.Rank)}
	if r.LocalRank >= 0 {
		attrs = append(attrs, LocalRankKey.Int(r.LocalRank))
	}
	if r.WorldSize >= 0 {
		attrs = append(attrs, WorldSizeKey.Int(r.WorldSize))
	}
	return attrs
}

func optionAttributes(c *providerConfig) []attribute.KeyValue {
	attrs := c.resourceAttrs
	if c.serviceName != "" {
		attrs = append(attrs[:len(attrs):len(attrs)], semconv.ServiceName(c.serviceName))
	}
	return attrs
}
