package deploy

// Stand-ins for the two contrib exporters whose modules the Go module proxy
// does not serve here (elasticsearchexporter and loadbalancingexporter,
// v0.165.1: "403 Forbidden ... This module version is not available"). Each
// is an exporter factory of the real component type whose configuration is
// a struct of the keys the exporter documents (its README and its
// config.schema.yaml in the contrib repository), decoded by the Collector's
// own confmap like any component's: a key that is not documented fails the
// load ("has invalid keys"), as it would in the real Collector. Where a
// section is a core type (the HTTP client, the sending queue, the OTLP
// exporter that loadbalancing builds per replica) it is that type, with its
// own validation. Validate repeats the documented rules that the shipped
// configurations rely on. The stand-ins never run: the test only loads.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
)

var (
	elasticsearchType = component.MustNewType("elasticsearch")
	loadbalancingType = component.MustNewType("loadbalancing")
)

// standInModules names the module each stand-in takes the place of, as the
// builder manifest lists it.
var standInModules = map[component.Type]string{
	elasticsearchType: "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/elasticsearchexporter",
	loadbalancingType: "github.com/open-telemetry/opentelemetry-collector-contrib/exporter/loadbalancingexporter",
}

var errStandIn = errors.New("a schema stand-in: loads a configuration, never runs")

// defaultQueue is the core exporters' default sending_queue.
func defaultQueue() configoptional.Optional[exporterhelper.QueueBatchConfig] {
	return otlpexporter.NewFactory().CreateDefaultConfig().(*otlpexporter.Config).QueueConfig
}

func standInFactory(typ component.Type, createDefault component.CreateDefaultConfigFunc) exporter.Factory {
	return exporter.NewFactory(typ, createDefault,
		exporter.WithLogs(func(context.Context, exporter.Settings, component.Config) (exporter.Logs, error) {
			return nil, errStandIn
		}, component.StabilityLevelBeta),
		exporter.WithTraces(func(context.Context, exporter.Settings, component.Config) (exporter.Traces, error) {
			return nil, errStandIn
		}, component.StabilityLevelBeta),
	)
}

// enabledSetting is the exporters' { enabled: bool } sections.
type enabledSetting struct {
	Enabled bool `mapstructure:"enabled"`
}

// esConfig is the elasticsearch exporter's documented configuration.
type esConfig struct {
	// endpoint, headers, tls, timeout, compression, auth, ... as in every
	// HTTP client of the Collector.
	confighttp.ClientConfig `mapstructure:",squash"`

	Endpoints []string `mapstructure:"endpoints"`
	CloudID   string   `mapstructure:"cloudid"`

	User     string              `mapstructure:"user"`
	Password configopaque.String `mapstructure:"password"`
	APIKey   configopaque.String `mapstructure:"api_key"`

	LogsIndex           string         `mapstructure:"logs_index"`
	LogsDynamicIndex    enabledSetting `mapstructure:"logs_dynamic_index"`
	MetricsIndex        string         `mapstructure:"metrics_index"`
	MetricsDynamicIndex enabledSetting `mapstructure:"metrics_dynamic_index"`
	TracesIndex         string         `mapstructure:"traces_index"`
	TracesDynamicIndex  enabledSetting `mapstructure:"traces_dynamic_index"`
	LogsDynamicID       enabledSetting `mapstructure:"logs_dynamic_id"`
	TracesDynamicID     enabledSetting `mapstructure:"traces_dynamic_id"`
	LogsDynamicPipeline enabledSetting `mapstructure:"logs_dynamic_pipeline"`
	Pipeline            string         `mapstructure:"pipeline"`

	NumWorkers int `mapstructure:"num_workers"` // deprecated in v0.136
	Discover   struct {
		OnStart  bool          `mapstructure:"on_start"`
		Interval time.Duration `mapstructure:"interval"`
	} `mapstructure:"discover"`
	Retry struct {
		Enabled         bool          `mapstructure:"enabled"`
		MaxRequests     int           `mapstructure:"max_requests"` // deprecated
		MaxRetries      int           `mapstructure:"max_retries"`
		InitialInterval time.Duration `mapstructure:"initial_interval"`
		MaxInterval     time.Duration `mapstructure:"max_interval"`
		RetryOnStatus   []int         `mapstructure:"retry_on_status"`
	} `mapstructure:"retry"`
	Flush struct { // deprecated in v0.136
		Bytes    int           `mapstructure:"bytes"`
		Interval time.Duration `mapstructure:"interval"`
	} `mapstructure:"flush"`
	Mapping struct {
		Mode         string   `mapstructure:"mode"`
		AllowedModes []string `mapstructure:"allowed_modes"`
	} `mapstructure:"mapping"`
	LogstashFormat struct {
		Enabled         bool   `mapstructure:"enabled"`
		PrefixSeparator string `mapstructure:"prefix_separator"`
		DateFormat      string `mapstructure:"date_format"`
	} `mapstructure:"logstash_format"`
	Telemetry struct {
		LogRequestBody              bool          `mapstructure:"log_request_body"`
		LogResponseBody             bool          `mapstructure:"log_response_body"`
		LogFailedDocsInput          bool          `mapstructure:"log_failed_docs_input"`
		LogFailedDocsInputRateLimit time.Duration `mapstructure:"log_failed_docs_input_rate_limit"`
	} `mapstructure:"telemetry"`
	IncludeSourceOnError   *bool    `mapstructure:"include_source_on_error"`
	MetadataKeys           []string `mapstructure:"metadata_keys"`
	BulkResponseFilterPath string   `mapstructure:"bulk_response_filter_path"`

	SendingQueue configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
}

func newESConfig() component.Config {
	c := &esConfig{ClientConfig: confighttp.NewDefaultClientConfig(), SendingQueue: defaultQueue()}
	c.Timeout = 90 * time.Second
	c.Compression = "gzip"
	c.Retry.Enabled = true
	c.Mapping.Mode = "otel"
	return c
}

// esMappingModes are the modes the exporter knows; since v0.145 it maps
// every document in otel mode whatever this says (the mode comes from the
// X-Elastic-Mapping-Mode client metadata or the elastic.mapping.mode scope
// attribute). The exporter loads another mode and ignores it; Validate
// refuses it, a rule of ours rather than the exporter's, because a shipped
// configuration that names a mode it does not get misleads its reader.
var esMappingModes = []string{"otel", "ecs", "none", "no", "raw", "bodymap"}

func (c *esConfig) Validate() error {
	var endpoints []string
	n := 0
	if c.Endpoint != "" {
		n++
		endpoints = append(endpoints, c.Endpoint)
	}
	if len(c.Endpoints) > 0 {
		n++
		endpoints = append(endpoints, c.Endpoints...)
	}
	if c.CloudID != "" {
		n++
	}
	if n == 0 && os.Getenv("ELASTICSEARCH_URL") != "" {
		n++
	}
	if n != 1 {
		return errors.New("exactly one of [endpoint, endpoints, cloudid] must be specified")
	}
	for _, e := range endpoints {
		u, err := url.Parse(e)
		if err != nil {
			return fmt.Errorf("invalid endpoint %q: %w", e, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf(`invalid endpoint %q: scheme %q, expected "http" or "https"`, e, u.Scheme)
		}
	}
	mode := strings.ToLower(c.Mapping.Mode)
	if !slices.Contains(esMappingModes, mode) && mode != "" {
		return fmt.Errorf("unknown mapping mode %q", c.Mapping.Mode)
	}
	if mode != "otel" && mode != "" {
		return fmt.Errorf("mapping::mode %q is ignored since v0.145 (documents are mapped in otel mode); remove it or write otel", c.Mapping.Mode)
	}
	if c.Compression != "" && c.Compression != "none" && c.Compression != "gzip" {
		return errors.New("compression must be one of [none, gzip]")
	}
	if c.Retry.MaxRequests != 0 && c.Retry.MaxRetries != 0 {
		return errors.New("must not specify both retry::max_requests and retry::max_retries")
	}
	if c.Retry.MaxRequests < 0 || c.Retry.MaxRetries < 0 {
		return errors.New("retry::max_requests and retry::max_retries must be non-negative")
	}
	return nil
}

// lbConfig is the loadbalancing exporter's documented configuration.
type lbConfig struct {
	exporterhelper.TimeoutConfig `mapstructure:",squash"`
	SendingQueue                 configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	RetryOnFailure               configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`

	Protocol struct {
		OTLP lbOTLP `mapstructure:"otlp"`
	} `mapstructure:"protocol"`
	Resolver struct {
		Static *struct {
			Hostnames []string `mapstructure:"hostnames"`
		} `mapstructure:"static"`
		DNS *struct {
			Hostname string        `mapstructure:"hostname"`
			Port     string        `mapstructure:"port"`
			Interval time.Duration `mapstructure:"interval"`
			Timeout  time.Duration `mapstructure:"timeout"`
		} `mapstructure:"dns"`
		K8s *struct {
			Service         string        `mapstructure:"service"`
			Ports           []int32       `mapstructure:"ports"`
			Timeout         time.Duration `mapstructure:"timeout"`
			ReturnHostnames bool          `mapstructure:"return_hostnames"`
		} `mapstructure:"k8s"`
		AWSCloudMap *struct {
			Namespace    string        `mapstructure:"namespace"`
			ServiceName  string        `mapstructure:"service_name"`
			HealthStatus string        `mapstructure:"health_status"`
			Interval     time.Duration `mapstructure:"interval"`
			Timeout      time.Duration `mapstructure:"timeout"`
			Port         *uint16       `mapstructure:"port"`
			OwnerAccount *string       `mapstructure:"owner_account"`
		} `mapstructure:"aws_cloud_map"`
	} `mapstructure:"resolver"`
	RoutingKey        string   `mapstructure:"routing_key"`
	RoutingAttributes []string `mapstructure:"routing_attributes"`
}

// lbOTLP is the OTLP/gRPC exporter's own configuration, which the
// loadbalancing exporter builds once per replica: every key the core
// otlp_grpc exporter takes, but the endpoint, which the resolver supplies.
type lbOTLP struct {
	cfg *otlpexporter.Config
}

func (o *lbOTLP) Unmarshal(conf *confmap.Conf) error {
	if conf.IsSet("endpoint") {
		return errors.New("protocol::otlp::endpoint is set by the resolver, for each replica: leave it out")
	}
	o.cfg = otlpexporter.NewFactory().CreateDefaultConfig().(*otlpexporter.Config)
	return conf.Unmarshal(o.cfg)
}

// Validate checks the OTLP settings as the core exporter would, with a
// stand-in for the endpoint.
func (o *lbOTLP) Validate() error {
	if o.cfg == nil {
		return nil
	}
	c := *o.cfg
	c.ClientConfig.Endpoint = "replica:4317"
	return confmap.Validate(&c)
}

func newLBConfig() component.Config {
	return &lbConfig{
		TimeoutConfig:  exporterhelper.NewDefaultTimeoutConfig(),
		SendingQueue:   defaultQueue(),
		RetryOnFailure: configretry.NewDefaultBackOffConfig(),
	}
}

// lbRoutingKeys are the documented routing keys.
var lbRoutingKeys = []string{"", "traceID", "service", "resource", "metric"}

func (c *lbConfig) Validate() error {
	r := c.Resolver
	if r.Static == nil && r.DNS == nil && r.K8s == nil && r.AWSCloudMap == nil {
		return errors.New("no resolver: give resolver::static, dns, k8s or aws_cloud_map")
	}
	if r.DNS != nil && r.DNS.Hostname == "" {
		return errors.New("resolver::dns::hostname is empty")
	}
	if r.Static != nil && len(r.Static.Hostnames) == 0 {
		return errors.New("resolver::static::hostnames is empty")
	}
	if !slices.Contains(lbRoutingKeys, c.RoutingKey) {
		return fmt.Errorf("unknown routing_key %q (documented: traceID, service, resource, metric)", c.RoutingKey)
	}
	return nil
}
