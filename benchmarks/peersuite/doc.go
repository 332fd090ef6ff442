// Package otelzap is the official bridge's test suite
// (go.opentelemetry.io/contrib/bridges/otelzap v0.21.0: core_test.go,
// encoder_test.go, convert_test.go, copied whole under the Apache 2.0
// licence in LICENSE, every assertion kept) run against zaplens: only the
// construction is changed, by zaplens_test.go, which gives the suite the
// names it calls (NewCore, its options, and the internal functions it
// tests) built on zaplens. The files hold the build tag peersuite;
// TestPeerSuite runs them and holds their outcome to the list of known
// differences in known_test.go, each with its reason.
package otelzap
