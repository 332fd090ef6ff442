// Package deploy holds no code: the module is the OpenTelemetry Collector
// tier that zaplens's users run in front of their log and trace backends
// (builder-config.yaml, gateway.yaml, agent.yaml, local.yaml and
// jaeger/ui-config.json), and its tests load every shipped configuration
// with the Collector's own configuration code, so that a typo or a renamed
// component fails CI. See docs/collector-tier.md.
package deploy
