package zaplens

import (
	"fmt"
	"strings"

	"go.uber.org/zap/zapcore"
)

// levelFor is one WithLevelFor: the level of the loggers under prefix.
type levelFor struct {
	prefix string
	level  zapcore.LevelEnabler
}

// levelOf is the level of the logger named name: the longest matching
// prefix's (the last given, for a prefix given twice), else WithLevel's.
func (c *config) levelOf(name string) zapcore.LevelEnabler {
	best, at := c.level, -1
	for _, lf := range c.levels {
		if len(lf.prefix) >= at && hasPrefix(name, []string{lf.prefix}) {
			best, at = lf.level, len(lf.prefix)
		}
	}
	return best
}

// anyLevel is what the bridge asks first, before it knows the name: the
// level any logger may want. Without WithLevelFor it is WithLevel's, as
// cheap as before; with fixed levels only, the least of them.
func (c *config) anyLevel() zapcore.LevelEnabler {
	if len(c.levels) == 0 {
		return c.level
	}
	all := levelUnion{c.level}
	least, fixed := zapcore.InvalidLevel, true
	for _, lf := range c.levels {
		all = append(all, lf.level)
	}
	for _, e := range all {
		l, ok := e.(zapcore.Level)
		fixed = fixed && ok
		least = min(least, l)
	}
	if fixed {
		return least
	}
	return all
}

// levelUnion takes a level when any of its members does: a dynamic level
// (zap.AtomicLevel) among WithLevelFor's is asked each time.
type levelUnion []zapcore.LevelEnabler

func (u levelUnion) Enabled(l zapcore.Level) bool {
	for _, e := range u {
		if e.Enabled(l) {
			return true
		}
	}
	return false
}

// Level is the least of its members' levels, for zapcore.LevelOf.
func (u levelUnion) Level() zapcore.Level {
	least := zapcore.InvalidLevel
	for _, e := range u {
		least = min(least, zapcore.LevelOf(e))
	}
	return least
}

// checkLevelPrefixes tells of WithLevelFor prefixes that can match no name.
func checkLevelPrefixes(levels []levelFor) {
	prefixes := make([]string, len(levels))
	for i, lf := range levels {
		prefixes[i] = lf.prefix
	}
	checkPrefixes("WithLevelFor", prefixes)
}

// parseLevelSpec reads a level specification, "info,http=warn,
// megatron.training=debug": a bare level is WithLevel's, name=level a
// WithLevelFor. Spaces around the parts are ignored. An unknown level, an
// empty part, an empty name, a second bare level or a name given twice is
// an error naming it, so that a typo in the environment is told, not
// ignored.
func parseLevelSpec(spec string) ([]Option, error) {
	var opts []Option
	seen := map[string]bool{}
	bare := false
	for part := range strings.SplitSeq(spec, ",") {
		part = strings.TrimSpace(part)
		name, lvl, named := strings.Cut(part, "=")
		name, lvl = strings.TrimSpace(name), strings.TrimSpace(lvl)
		if !named {
			lvl = name
		}
		if part == "" || (named && name == "") {
			return nil, fmt.Errorf("level spec %q: empty part %q: want level or name=level", spec, part)
		}
		l, err := zapcore.ParseLevel(lvl)
		if err != nil {
			return nil, fmt.Errorf("level spec %q: %q: %w", spec, part, err)
		}
		switch {
		case !named && bare:
			return nil, fmt.Errorf("level spec %q: two levels for every logger", spec)
		case !named:
			bare = true
			opts = append(opts, WithLevel(l))
		case seen[name]:
			return nil, fmt.Errorf("level spec %q: %q is given twice", spec, name)
		default:
			seen[name] = true
			opts = append(opts, WithLevelFor(name, l))
		}
	}
	return opts, nil
}
