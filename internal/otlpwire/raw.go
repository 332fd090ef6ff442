package otlpwire

// A resource or scope is kept on disk by the spool as its encoded field and
// schema URL, and read back by another process to send what a dead one
// left: these give the two parts and take them back, unchanged.

// Raw returns the encoded ResourceLogs.resource field, tag included (nil
// for an empty resource), and the schema URL.
func (r Resource) Raw() (field []byte, schemaURL string) { return r.field, r.schemaURL }

// ResourceFromRaw is the Resource whose Raw gave field and schemaURL.
func ResourceFromRaw(field []byte, schemaURL string) Resource {
	return Resource{field: field, schemaURL: schemaURL}
}

// Raw returns the encoded ScopeLogs.scope field, tag included (nil for the
// empty scope), and the schema URL.
func (s Scope) Raw() (field []byte, schemaURL string) { return s.field, s.schemaURL }

// ScopeFromRaw is the Scope whose Raw gave field and schemaURL.
func ScopeFromRaw(field []byte, schemaURL string) Scope {
	return Scope{field: field, schemaURL: schemaURL}
}
