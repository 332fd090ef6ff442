package configfile

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/zaplens/zaplens/internal/declarative"
)

// Every setting zaplens reads is copied from otelconf's types, absent kept
// apart from zero and from empty; settings_test.go and the pipeline's own
// tests (otlplog/config_test.go) check what is made of them.
func TestParseCopiesWhatThePipelineReads(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       string // the Config as JSON
	}{
		{"absent", `file_format: "1.0"`, `{"Disabled":false,"AttributeLimits":null,"LoggerProvider":null,"Resource":null}`},
		{"disabled", `{file_format: "1.0", disabled: true, logger_provider: {processors: []}}`,
			`{"Disabled":true,"AttributeLimits":null,"LoggerProvider":{"Limits":null,"Processors":[]},"Resource":null}`},
		{"grpc", `{file_format: "1.0", attribute_limits: {attribute_count_limit: 5, attribute_value_length_limit: 6},
			logger_provider: {limits: {attribute_count_limit: 7}, processors: [{simple: {exporter: {console: }}},
			{batch: {max_queue_size: 1, max_export_batch_size: 2, schedule_delay: 3, export_timeout: 4, exporter: {otlp_grpc: {
				endpoint: "c:1", compression: gzip, timeout: 8, headers: [{name: a, value: b}, {name: n, value: null}], headers_list: "k=v",
				tls: {ca_file: ca, cert_file: cert, key_file: key, insecure: true}}}}}]}}`,
			`{"Disabled":false,"AttributeLimits":{"AttributeCountLimit":5,"AttributeValueLengthLimit":6},` +
				`"LoggerProvider":{"Limits":{"AttributeCountLimit":7,"AttributeValueLengthLimit":null},"Processors":[` +
				`{"Simple":true,"Batch":null},` +
				`{"Simple":false,"Batch":{"MaxQueueSize":1,"MaxExportBatchSize":2,"ScheduleDelay":3,"ExportTimeout":4,"Exporter":{"Console":false,` +
				`"OTLPGrpc":{"Endpoint":"c:1","Compression":"gzip","Timeout":8,"Headers":[{"Name":"a","Value":"b"},{"Name":"n","Value":null}],` +
				`"HeadersList":"k=v","Encoding":null,"TLS":{"CAFile":"ca","CertFile":"cert","KeyFile":"key","Insecure":true}},"OTLPHttp":null}}}]},` +
				`"Resource":null}`},
		{"http and console", `{file_format: "1.0", logger_provider: {processors: [
			{batch: {exporter: {otlp_http: {endpoint: "https://c", compression: none, timeout: 9, encoding: json, headers: [], headers_list: "h=1", tls: {ca_file: ca, cert_file: cert, key_file: key}}}}},
			{batch: {exporter: {console: }}}, {batch: {exporter: {otlp_http: {endpoint: e}}}}]}}`,
			`{"Disabled":false,"AttributeLimits":null,"LoggerProvider":{"Limits":null,"Processors":[` +
				`{"Simple":false,"Batch":{"MaxQueueSize":null,"MaxExportBatchSize":null,"ScheduleDelay":null,"ExportTimeout":null,"Exporter":{"Console":false,"OTLPGrpc":null,` +
				`"OTLPHttp":{"Endpoint":"https://c","Compression":"none","Timeout":9,"Headers":[],"HeadersList":"h=1","Encoding":"json",` +
				`"TLS":{"CAFile":"ca","CertFile":"cert","KeyFile":"key","Insecure":null}}}}},` +
				`{"Simple":false,"Batch":{"MaxQueueSize":null,"MaxExportBatchSize":null,"ScheduleDelay":null,"ExportTimeout":null,"Exporter":{"Console":true,"OTLPGrpc":null,"OTLPHttp":null}}},` +
				`{"Simple":false,"Batch":{"MaxQueueSize":null,"MaxExportBatchSize":null,"ScheduleDelay":null,"ExportTimeout":null,"Exporter":{"Console":false,"OTLPGrpc":null,` +
				`"OTLPHttp":{"Endpoint":"e","Compression":null,"Timeout":null,"Headers":null,"HeadersList":null,"Encoding":null,` +
				`"TLS":{"CAFile":null,"CertFile":null,"KeyFile":null,"Insecure":null}}}}}]},"Resource":null}`},
		{"resource", `{file_format: "1.0", resource: {attributes_list: "a=b", schema_url: "https://s",
			attributes: [{name: s, value: x}, {name: i, value: 1, type: int}, {name: l, value: [1.5], type: double_array}]}}`,
			`{"Disabled":false,"AttributeLimits":null,"LoggerProvider":null,"Resource":{"Attributes":[` +
				`{"Name":"s","Type":"","Value":"x"},{"Name":"i","Type":"int","Value":1},{"Name":"l","Type":"double_array","Value":[1.5]}],` +
				`"AttributesList":"a=b","SchemaURL":"https://s"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse([]byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// Importing the package registers its reader, and a file otelconf refuses
// is an error.
func TestRegistered(t *testing.T) {
	parse := declarative.Registered()
	if parse == nil {
		t.Fatal("no reader registered")
	}
	if _, err := parse(context.Background(), []byte("file_format: [")); err == nil {
		t.Error("a bad file parsed")
	}
}
