// Package gateways is what a collector tier on one machine needs around the
// Collector itself (internal/otelcol): the replicas' addresses and ports, a
// DNS server that names them, and deploy/gateway.yaml as such a machine
// can run it. The integration test TestTier and the example's -tier mode
// use it both.
package gateways
