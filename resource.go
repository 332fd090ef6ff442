package zaplens

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Resource attribute keys of a distributed job's process, set when a
// launcher's variables are found (see [LookupRank]). They are named as
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
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithOSType(),
		resource.WithProcessPID(),
		resource.WithProcessExecutableName(),
		resource.WithProcessRuntimeName(),
		resource.WithProcessRuntimeVersion(),
		resource.WithAttributes(rankAttributes()...),
		fromEnv(c),
		resource.WithAttributes(optionAttributes(c)...),
	)
	if errors.Is(err, resource.ErrPartialResource) {
		// The SDK's message quotes the bad pairs, which may hold secrets.
		return nil, errors.New("OTEL_RESOURCE_ATTRIBUTES is malformed: want key=value pairs separated by commas, values percent-encoded")
	}
	if err != nil && res == nil {
		return nil, err
	}
	// A detector that failed (no hostname, say) only leaves its attributes
	// out: no reason to send no logs at all.
	err = nil
	if _, ok := res.Set().Value(semconv.ServiceNameKey); !ok {
		// The spec's fallback, which resource.Default would give.
		res, err = resource.Merge(res, resource.NewSchemaless(
			semconv.ServiceName("unknown_service:"+filepath.Base(os.Args[0]))))
	}
	return res, err
}

// fromEnv reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, or only
// the first when the second could not be read and is ignored.
func fromEnv(c *providerConfig) resource.Option {
	if !c.skipResourceEnv {
		return resource.WithFromEnv()
	}
	if name := strings.TrimSpace(os.Getenv("OTEL_SERVICE_NAME")); name != "" {
		return resource.WithAttributes(semconv.ServiceName(name))
	}
	return resource.WithAttributes()
}

func rankAttributes() []attribute.KeyValue {
	r, ok := LookupRank()
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
