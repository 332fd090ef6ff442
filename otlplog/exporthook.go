package otlplog

import "github.com/zaplens/zaplens/internal/exporthook"

// For the tests of the bridge, which cannot reach providerConfig.
func init() {
	exporthook.WithExport = func(export exporthook.Export) any {
		return providerOptionFunc(func(c *providerConfig) { c.exportFunc = export })
	}
}
