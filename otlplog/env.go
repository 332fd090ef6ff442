package otlplog

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/zaplens/zaplens/internal/confval"
)

// The environment is read here rather than left to otlploggrpc and the SDK:
// they skip a bad value with a message that may quote it (a header value, an
// endpoint with credentials). Every value is validated. A bad one is
// treated as not set, as the OpenTelemetry spec says of an unparsable
// value, and told once on the loss writer, so that a typo never turns
// shipping off; only what makes shipping impossible (an unsupported
// protocol, an invalid option or file setting) fails NewLoggerProvider.
// Which of the two a bad value is, setting.bad decides, by where the value
// came from. No message quotes a header or credential. The variables are
// declared in variables.go.

// ignoredValue is a variable's value that cannot be used: it becomes a
// warning, and the setting keeps its default.
type ignoredValue struct{ err error }

func (e ignoredValue) Error() string { return e.err.Error() }

// ignored marks err, about a variable's value, as one to warn of and go
// on without.
func ignored(err error) error {
	if err == nil {
		return nil
	}
	return ignoredValue{err}
}

// bad is the rule, decided here for every setting: a value a variable
// gave that cannot be used is treated as not set, def taking its place,
// and is told; one an option or the configuration file gave makes
// shipping impossible. A nil err is no bad value.
func (s *setting[T]) bad(def T, err error) error {
	if err == nil || !s.env {
		return err
	}
	*s = setting[T]{value: def}
	return ignored(err)
}

// resolve is the one resolver: option, then variable, then default. A
// setting an option or the file gave keeps its value, checked by check
// (nil: any value); else the first of v's variables that is set is read
// by parse, which names it in its error; else the setting takes def. A
// value that cannot be used is dealt with by the rule (bad).
func resolve[T any](s *setting[T], v *variable, def T, parse func(name, raw string) (T, error), check func(*setting[T]) error) error {
	return resolveNames(s, v, def, parse, check, false)
}

// resolveEach is resolve for a setting whose bad variable gives way to
// the next of its names, as otlploggrpc reads the endpoint and headers.
func resolveEach[T any](s *setting[T], v *variable, def T, parse func(name, raw string) (T, error), check func(*setting[T]) error) error {
	return resolveNames(s, v, def, parse, check, true)
}

func resolveNames[T any](s *setting[T], v *variable, def T, parse func(name, raw string) (T, error), check func(*setting[T]) error, each bool) error {
	if s.set {
		if check == nil {
			return nil
		}
		return s.bad(def, check(s))
	}
	var errs []error
	for _, name := range v.names {
		raw := v.getenv(name)
		if raw == "" {
			continue
		}
		s.env, s.from = true, name
		x, err := parse(name, raw)
		if err == nil {
			s.put(x)
			return errors.Join(errs...)
		}
		errs = append(errs, s.bad(def, err))
		if !each {
			return errs[0]
		}
	}
	s.value = def
	return errors.Join(errs...)
}

// said is a setting's value as it was given, for messages: VARIABLE=value
// or Option(value), a file's key as an option, a string quoted.
func said[T any](s *setting[T]) string {
	v := fmt.Sprint(s.value)
	if str, ok := any(s.value).(string); ok {
		v = strconv.Quote(str)
	}
	if s.env {
		return s.from + "=" + v
	}
	return s.from + "(" + v + ")"
}

// triage turns the ignored values among errs into warnings and returns the
// rest, the errors that make shipping impossible.
func (c *providerConfig) triage(errs ...error) error {
	var fatal []error
	for _, err := range errs {
		switch e := err.(type) {
		case nil:
		case ignoredValue:
			c.warnings = append(c.warnings, e.Error()+"; ignored, as if not set")
		case interface{ Unwrap() []error }:
			fatal = append(fatal, c.triage(e.Unwrap()...))
		default:
			fatal = append(fatal, err)
		}
	}
	return errors.Join(fatal...)
}

// resolveEnv fills every setting no option set from the environment, then
// the defaults, and validates the result, step by step (variables.go). A
// bad variable becomes a warning and is treated as not set; what it
// returns makes shipping impossible.
func (c *providerConfig) resolveEnv() error {
	if err := c.triage(c.readStep(stepSwitch)); err != nil || c.off() {
		return err
	}
	var otlp error
	if c.exportFunc == nil && c.exporterName.value == "otlp" {
		// Nothing can be sent with a protocol zaplens does not speak: the
		// rest of OTLP's does not matter.
		if otlp = c.readStep(stepProtocol); otlp == nil {
			otlp = c.readStep(stepOTLP)
		}
	}
	return c.triage(otlp, c.readStep(stepBatch), c.fitBatch(), c.readStep(stepLimits), c.readStep(stepResource))
}

// off tells whether the provider is a no-op by configuration.
func (c *providerConfig) off() bool {
	return c.disabled.value || (c.exporterName.value == "none" && c.exportFunc == nil)
}

// parseBool reads a boolean variable: only true and false, in any case,
// so that "1" or "yes" fail loudly rather than mean false. Blanks are
// false.
func parseBool(name, raw string) (bool, error) {
	switch b := strings.ToLower(strings.TrimSpace(raw)); b {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, fmt.Errorf("%s=%q: want true or false", name, raw)
}

// parseCount reads a count variable of at least least.
func parseCount(least int) func(name, raw string) (int, error) {
	return func(name, raw string) (int, error) {
		n, err := parseInt(name, raw, int64(least), math.MaxInt, "")
		return int(n), err
	}
}

// parseMillis reads a duration variable in milliseconds, at least least
// of them.
func parseMillis(least int) func(name, raw string) (time.Duration, error) {
	return func(name, raw string) (time.Duration, error) {
		n, err := parseInt(name, raw, int64(least), confval.MaxMillis, "milliseconds")
		return time.Duration(n) * time.Millisecond, err
	}
}

// parseInt reads an integer variable of least to most, counting unit, for
// messages: "" for a count, else milliseconds, of a duration. It is read
// as 64 bits on every platform.
func parseInt(name, raw string, least, most int64, unit string) (int64, error) {
	inUnit, tooMany := "", fmt.Sprintf("more than %d", most)
	if unit != "" {
		inUnit, tooMany = " ("+unit+")", confval.DurationOverflow
	}
	// Out of range, ParseInt gives the nearer end: the least bound
	// refuses the lower, over the upper.
	trimmed := strings.TrimSpace(raw)
	n, err := strconv.ParseInt(trimmed, 10, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%s=%q: not an integer%s", name, raw, inUnit)
	case n > most || (err != nil && n > 0):
		return 0, fmt.Errorf("%s=%s: %s", name, trimmed, tooMany)
	case n < least:
		return 0, fmt.Errorf("%s=%s: must be at least %d", name, trimmed, least)
	}
	return n, nil
}

// atLeast checks a count an option or the file gave.
func atLeast(least int) func(*setting[int]) error {
	return func(s *setting[int]) error {
		if s.value < least {
			return fmt.Errorf("%s: must be at least %d", said(s), least)
		}
		return nil
	}
}

// atLeastMillis checks a duration an option or the file gave, any part of
// a millisecond counting as one.
func atLeastMillis(least int) func(*setting[time.Duration]) error {
	return func(s *setting[time.Duration]) error {
		ms := s.value / time.Millisecond
		if s.value > 0 && ms == 0 {
			ms = 1 // a sub-millisecond option is still a positive one
		}
		if ms < time.Duration(least) {
			return fmt.Errorf("%s: must be at least %v", said(s), time.Duration(least)*time.Millisecond)
		}
		return nil
	}
}

// exportBound is the default bound of one export by the pipeline: over
// OTLP, its retries' and one attempt's, so that it cuts no retry short
// (the OTLP timeout bounds each attempt, as the spec's text has it).
func (c *providerConfig) exportBound() time.Duration {
	if c.retryElapsed.value > 0 {
		return c.retryElapsed.value + c.otlpTimeout.value
	}
	return DefaultExportTimeout
}

// minRequestBytes keeps a request bound large enough for a record with a
// few cut values.
const minRequestBytes = 64 << 10

// fitBatch holds the batch within the queue, once both are resolved.
func (c *providerConfig) fitBatch() error {
	var errs []error
	// The SDK clamps a batch larger than the queue without a word; here,
	// by the rule, the batch size's variable is ignored, else the queue
	// size's, and two options or file settings fail. The default batch is
	// lowered to a quarter of a record bound, the SDK's own ratio (512 of
	// 2048): a batch the size of the queue would leave only when the queue
	// is full, and every record logged while it is sent would be dropped.
	q := c.queueSize.value // 0: only bytes bound the queue
	if q > 0 && c.batchSize.set && c.batchSize.value > q {
		// Each is named by who gave it; a variable, as its warning always
		// read, with the option that overrides it.
		named := func(s *setting[int], option string) string {
			if s.env {
				return s.from + " or " + option
			}
			return s.from
		}
		err := fmt.Errorf("batch size %d (%s) is larger than queue size %d (%s)",
			c.batchSize.value, named(&c.batchSize, "WithBatchSize"), q, named(&c.queueSize, "WithQueueSize"))
		if c.batchSize.env {
			errs = append(errs, c.batchSize.bad(DefaultBatchSize, err))
		} else {
			errs = append(errs, c.queueSize.bad(0, err))
			q = c.queueSize.value
		}
	}
	if q > 0 && !c.batchSize.set {
		c.batchSize.value = max(1, min(c.batchSize.value, q/4))
	}
	return errors.Join(errs...)
}
