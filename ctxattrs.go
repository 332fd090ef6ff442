package zaplens

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/zaplens/zaplens/internal/zapfield"
)

// A ctxAttrs is a feature that adds attributes read from the entry's
// context: WithBaggage's, and whatever comes next. Its option puts it in
// the config's one slot (ctxAttrsOf); the bridge reads every feature of
// the slot once per With context, and per entry for an entry's own
// context, into the encoder's slot (zapfield.EntryState.Added), which
// both ways write after the entry's own attributes: the general way in
// Encoder.Attributes, the direct way in Encoder.AppendDirect. A new
// feature of this kind is its own file and its option, nothing else.
type ctxAttrs interface {
	appendAttrs(dst []attribute.KeyValue, ctx context.Context) []attribute.KeyValue
}

// ctxAttrsOf returns c's feature of type P, put in the slot the first time
// an option asks for it, so that an option given twice adds to its own.
func ctxAttrsOf[E any, P interface {
	*E
	ctxAttrs
}](c *config) P {
	for _, f := range c.ctxAttrs {
		if p, ok := f.(P); ok {
			return p
		}
	}
	p := P(new(E))
	c.ctxAttrs = append(c.ctxAttrs, p)
	return p
}

// appendCtxAttrs appends the attributes every feature in the slot reads
// from ctx, in the order the options were given.
func (c *config) appendCtxAttrs(dst []attribute.KeyValue, ctx context.Context) []attribute.KeyValue {
	for _, f := range c.ctxAttrs {
		dst = f.appendAttrs(dst, ctx)
	}
	return dst
}

// addCtxAttrs fills e's slot from the entry's context: the entry's own,
// read now, or With's, read once with the logger.
func (c *Core) addCtxAttrs(e *zapfield.Encoder, r *entryRead) {
	switch {
	case len(c.b.cfg.ctxAttrs) == 0:
	case r.ctx == nil:
		e.Entry.Added = append(e.Entry.Added, c.ctxAttrs...)
	default:
		e.Entry.Added = c.b.cfg.appendCtxAttrs(e.Entry.Added, r.ctx)
	}
}
