package zaplens

import "go.opentelemetry.io/otel/attribute"

// zap lets a key repeat (a With field and a call field, say); OTel log
// records must not. The OTel SDK removes repeats itself, but one attribute
// at a time through pooled maps, the largest single cost of an emit. The
// bridge knows its attributes whole and removes repeats far cheaper, so
// every record it emits has unique keys at every level; a LoggerProvider's
// own loggers do the same for records other code emits (dedupDeep).

// maxLinearDedup is where a map starts to beat comparing every pair.
const maxLinearDedup = 32

// dedup removes repeated keys in place, as the SDK does: the value of the
// last, at the place of the first.
func dedup(kvs []attribute.KeyValue) []attribute.KeyValue {
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

// dedupDeep makes kvs's keys unique, and those of every map in their
// values, as the SDK does for records other code emits.
func dedupDeep(kvs []attribute.KeyValue) []attribute.KeyValue {
	kvs, _ = dedupDeepChanged(kvs)
	return kvs
}

func dedupDeepChanged(kvs []attribute.KeyValue) ([]attribute.KeyValue, bool) {
	n := len(kvs)
	kvs = dedup(kvs)
	changed := len(kvs) != n
	for i := range kvs {
		var c bool
		kvs[i].Value, c = dedupValueChanged(kvs[i].Value)
		changed = changed || c
	}
	return kvs, changed
}

// dedupValue returns v with unique keys in every map at any depth.
func dedupValue(v attribute.Value) attribute.Value {
	v, _ = dedupValueChanged(v)
	return v
}

// dedupValueChanged returns v itself, and false, when it has no repeat,
// which is nearly always.
func dedupValueChanged(v attribute.Value) (attribute.Value, bool) {
	switch v.Type() {
	case attribute.MAP:
		if kvs, changed := dedupDeepChanged(v.AsMap()); changed {
			return attribute.MapValue(kvs...), true
		}
	case attribute.SLICE:
		vals := v.AsSlice()
		changed := false
		for i := range vals {
			var c bool
			vals[i], c = dedupValueChanged(vals[i])
			changed = changed || c
		}
		if changed {
			return attribute.SliceValue(vals...), true
		}
	}
	return v, false
}
