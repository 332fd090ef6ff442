package transport

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Result.Status is the last answer's status as the semantic conventions
// write it, or "" when no answer came over HTTP.
func TestResultStatus(t *testing.T) {
	_, body := testRequest(t, 3)
	grpcCases := []struct {
		name   string
		handle func(context.Context, int) (*collogspb.ExportLogsServiceResponse, error)
		want   string
	}{
		{"delivered", nil, "OK"},
		{"partial", func(context.Context, int) (*collogspb.ExportLogsServiceResponse, error) {
			return &collogspb.ExportLogsServiceResponse{PartialSuccess: &collogspb.ExportLogsPartialSuccess{RejectedLogRecords: 1}}, nil
		}, "OK"},
		{"invalid", func(context.Context, int) (*collogspb.ExportLogsServiceResponse, error) {
			return nil, status.Error(codes.InvalidArgument, "no")
		}, "INVALID_ARGUMENT"},
	}
	for _, tc := range grpcCases {
		c := &collector{handle: tc.handle}
		cl := newClient(t, grpcConfig(c.start(t)))
		if r, _ := export(cl, body, 3, Normal); r.Status != tc.want {
			t.Errorf("grpc %s: status %q, want %q (%v)", tc.name, r.Status, tc.want, r.Err)
		}
	}
	down := newClient(t, grpcConfig(closedAddr(t)))
	if r, _ := export(down, body, 3, Final); r.Status != "UNAVAILABLE" || r.Cause != Refused {
		t.Errorf("grpc refused: status %q, cause %v", r.Status, r.Cause)
	}

	for _, tc := range []struct {
		code int
		want string
	}{{http.StatusOK, "200"}, {http.StatusBadRequest, "400"}} {
		h := &httpCollector{handle: func(w http.ResponseWriter, _ *http.Request, _ int) {
			answer(w, tc.code, &collogspb.ExportLogsServiceResponse{})
		}}
		s := h.start(t)
		cl := newClient(t, httpConfig(s.URL))
		if r, _ := export(cl, body, 3, Normal); r.Status != tc.want {
			t.Errorf("http %d: status %q (%v)", tc.code, r.Status, r.Err)
		}
	}
	hdown := newClient(t, httpConfig("http://"+closedAddr(t)))
	if r, _ := export(hdown, body, 3, Final); r.Status != "" || r.Err == nil {
		t.Errorf("http refused: status %q, err %v", r.Status, r.Err)
	}
	if got := grpcCodeName(codes.Code(len(grpcCodeNames))); got != strconv.Itoa(len(grpcCodeNames)) {
		t.Errorf("the code past the last named: %q", got)
	}
	if got := grpcCodeName(codes.Code(99)); got != "99" {
		t.Errorf("unknown code named %q", got)
	}
}
