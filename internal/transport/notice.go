package transport

import "context"

type retryNoticeKey struct{}

// WithRetryNotice returns a context that makes an Export called with it
// call f before each retry, after a failed attempt: a caller can then tell
// an export that is retrying from one whose first attempt is in flight.
// f must not block.
func WithRetryNotice(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, retryNoticeKey{}, f)
}

// retryNotice calls the function WithRetryNotice put in ctx, if any.
func retryNotice(ctx context.Context) {
	if f, ok := ctx.Value(retryNoticeKey{}).(func()); ok {
		f()
	}
}
