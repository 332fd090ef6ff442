package otlpwire

import "go.opentelemetry.io/otel/attribute"

// zap lets a key repeat (a With field and a call field, say); OTel log
// records must not. The OTel SDK removes repeats itself, but one attribute
// at a time through pooled maps, the largest single cost of an emit. The
// bridge knows its attributes whole and removes repeats far cheaper, so
// every record it emits has unique keys at every level; a LoggerProvider's
// own loggers do the same for records other code emits (dedup at the top,
// Limits.UniqueMaps in maps).

// maxLinearDedup is where a map starts to beat comparing every pair.
const maxLinearDedup = 32

// Dedup removes repeated keys in place, as the SDK does: the value of the
// last, at the place of the first.
func Dedup(kvs []attribute.KeyValue) []attribute.KeyValue {
	if len(kvs) > maxLinearDedup {
		return dedupMap(kvs)
	}
	n := 0
	for _, kv := range kvs {
		if j := indexOf(kvs[:n], kv.Key); j >= 0 {
			kvs[j] = kv
			continue
		}
		kvs[n] = kv
		n++
	}
	clear(kvs[n:])
	return kvs[:n]
}

func indexOf(kvs []attribute.KeyValue, key attribute.Key) int {
	for i := range kvs {
		if kvs[i].Key == key {
			return i
		}
	}
	return -1
}

func dedupMap(kvs []attribute.KeyValue) []attribute.KeyValue {
	at := make(map[attribute.Key]int, len(kvs))
	n := 0
	for _, kv := range kvs {
		if j, ok := at[kv.Key]; ok {
			kvs[j] = kv
			continue
		}
		at[kv.Key] = n
		kvs[n] = kv
		n++
	}
	clear(kvs[n:])
	return kvs[:n]
}
