package configfile

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"

	"github.com/zaplens/zaplens/internal/confval"
	"github.com/zaplens/zaplens/internal/declarative"
)

// fileResource builds the resource section as otelconf builds it for the
// program's other providers, but the environment: the SDK's attributes,
// under attributes_list, under attributes, with the schema URL given.
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES go under it as under any
// given resource (otlplog's givenResource), read the one way that quotes
// no secret and half-reads no bad value; so does the unknown_service
// fallback, which the SDK's default resource has.
func fileResource(ctx context.Context, r *declarative.Resource) (*sdkresource.Resource, error) {
	sdk, err := sdkresource.New(ctx, sdkresource.WithTelemetrySDK())
	if err != nil || r == nil {
		return sdk, err
	}
	var list []attribute.KeyValue
	if r.AttributesList != nil {
		pairs, err := confval.ParsePairs("resource.attributes_list", *r.AttributesList, confval.ResourceValue)
		if err != nil {
			return nil, err
		}
		for k, v := range pairs {
			list = append(list, attribute.String(k, v))
		}
	}
	attrs := make([]attribute.KeyValue, 0, len(r.Attributes))
	for i, a := range r.Attributes {
		kv, err := fileAttribute(a)
		if err != nil {
			return nil, fmt.Errorf("resource.attributes[%d] (%s): %w", i, confval.Printable(a.Name), err)
		}
		attrs = append(attrs, kv)
	}
	schema := ""
	if r.SchemaURL != nil {
		schema = *r.SchemaURL
	}
	return sdkresource.New(ctx,
		sdkresource.WithAttributes(sdk.Attributes()...), // without its schema URL, which the file's replaces
		sdkresource.WithAttributes(list...),
		sdkresource.WithAttributes(attrs...),
		sdkresource.WithSchemaURL(schema))
}

// fileAttribute converts a resource attribute of the file: its value as
// otelconf converts it, and the arrays its type names as arrays.
func fileAttribute(a declarative.Attribute) (attribute.KeyValue, error) {
	vs, isArray := a.Value.([]any)
	if !isArray {
		switch v := a.Value.(type) {
		case bool:
			return attribute.Bool(a.Name, v), nil
		case int:
			return attribute.Int(a.Name, v), nil
		case float64:
			return attribute.Float64(a.Name, v), nil
		case string:
			return attribute.String(a.Name, v), nil
		}
		return attribute.String(a.Name, fmt.Sprint(a.Value)), nil
	}
	t := a.Type
	if t == "" {
		t = "string_array"
	}
	switch t {
	case "bool_array":
		return arrayAttribute(a.Name, t, vs, attribute.BoolSlice)
	case "int_array":
		return arrayAttribute(a.Name, t, vs, attribute.IntSlice)
	case "double_array":
		return arrayAttribute(a.Name, t, vs, attribute.Float64Slice)
	case "string_array":
		return arrayAttribute(a.Name, t, vs, attribute.StringSlice)
	}
	return attribute.KeyValue{}, fmt.Errorf("an array of type %s", t)
}

// arrayAttribute is the file's array vs as the attribute kv makes of a
// []T, or an error if an element is not a T.
func arrayAttribute[T any](name, t string, vs []any, kv func(string, []T) attribute.KeyValue) (attribute.KeyValue, error) {
	out := make([]T, len(vs))
	for i, v := range vs {
		e, ok := v.(T)
		if !ok {
			return attribute.KeyValue{}, fmt.Errorf("an element is not of type %s", t)
		}
		out[i] = e
	}
	return kv(name, out), nil
}
