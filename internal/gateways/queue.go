package gateways

import (
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"
)

// LogsExporter is the gateway's exporter to VictoriaLogs, the tier's
// logs pipeline's one exporter once Config has taken elasticsearch out.
const LogsExporter = "otlp_http/victorialogs"

// defaultQueueConsumers is the Collector's sending_queue::num_consumers
// when a configuration sets none (exporterhelper's default).
const defaultQueueConsumers = 10

// UnansweredRecords is, for the gateway configuration at path (Config's),
// the most log records a replica may have sent to VictoriaLogs and not yet
// seen answered: a batch of its exporter's sending_queue::batch::max_size
// for each of the queue's consumers (num_consumers, the Collector's 10
// when unset). A replica killed sends them again in its next life: the
// duplicates one kill can make. max_size counts log records only when the
// batch's sizer says items; a configuration that leaves it to a default
// (the queue's sizer, requests unless set) or measures bytes is refused.
func UnansweredRecords(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var cfg struct {
		Exporters map[string]struct {
			SendingQueue struct {
				NumConsumers int `yaml:"num_consumers"`
				Batch        struct {
					Sizer   string
					MaxSize int `yaml:"max_size"`
				}
			} `yaml:"sending_queue"`
		}
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	q := cfg.Exporters[LogsExporter].SendingQueue
	if q.Batch.MaxSize <= 0 {
		return 0, fmt.Errorf("%s: no sending_queue::batch::max_size for the %s exporter", path, LogsExporter)
	}
	if q.Batch.Sizer != "items" {
		return 0, fmt.Errorf("%s: the %s exporter's sending_queue::batch::max_size counts %q, not log records: want sizer: items", path, LogsExporter, q.Batch.Sizer)
	}
	if q.NumConsumers <= 0 {
		q.NumConsumers = defaultQueueConsumers
	}
	return q.NumConsumers * q.Batch.MaxSize, nil
}
