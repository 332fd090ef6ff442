package zaplens

import (
	"errors"
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

// levelSpec is a level specification read: the level of every logger,
// if given, and those of name prefixes.
type levelSpec struct {
	all    zapcore.Level
	hasAll bool
	fors   []levelFor
}

// options are the spec as options: WithLevel and WithLevelFor.
func (s levelSpec) options() []Option {
	var opts []Option
	if s.hasAll {
		opts = append(opts, WithLevel(s.all))
	}
	for _, lf := range s.fors {
		opts = append(opts, WithLevelFor(lf.prefix, lf.level))
	}
	return opts
}

// parseLevelSpec reads a level specification, "info,http=warn,
// megatron.training=debug": a bare level is WithLevel's, name=level a
// WithLevelFor; a level is one of zap's names, in any case, or off.
// Spaces around the parts are ignored. It keeps every part that parses and
// returns an error naming each that does not (an unknown or empty level,
// an empty part or name, a second bare level, a name given twice: the
// first given holds), so that a typo in the environment is told and costs
// only its own part.
func parseLevelSpec(spec string) (levelSpec, []error) {
	var out levelSpec
	var errs []error
	seen := map[string]bool{}
	for part := range strings.SplitSeq(spec, ",") {
		if err := out.add(strings.TrimSpace(part), seen); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errs
}

// add reads one part of a level specification into s.
func (s *levelSpec) add(part string, seen map[string]bool) error {
	name, lvl, named := strings.Cut(part, "=")
	name, lvl = strings.TrimSpace(name), strings.TrimSpace(lvl)
	if !named {
		lvl = name
	}
	if part == "" || (named && name == "") {
		return fmt.Errorf("empty part %q: want level or name=level", part)
	}
	l, err := parseLevelName(lvl)
	switch {
	case err != nil && named:
		return fmt.Errorf("%q: %w", part, err)
	case err != nil:
		return err
	case !named && s.hasAll:
		return fmt.Errorf("%q: two levels for every logger", part)
	case !named:
		s.all, s.hasAll = l, true
	case seen[name]:
		return fmt.Errorf("%q: %q is given twice", part, name)
	default:
		seen[name] = true
		s.fors = append(s.fors, levelFor{prefix: name, level: l})
	}
	return nil
}

// parseLevelName reads one of zap's level names, in any case, or off.
// Empty is no level (zap reads it as info).
func parseLevelName(v string) (zapcore.Level, error) {
	name := strings.ToLower(v)
	switch name {
	case "":
		return 0, errors.New("an empty level; want debug, info, warn, error, dpanic, panic, fatal or off")
	case "off":
		return Off, nil
	}
	l, err := zapcore.ParseLevel(name)
	if err != nil {
		return 0, errors.New("want debug, info, warn, error, dpanic, panic, fatal or off")
	}
	return l, nil
}
