package otlpview

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // gzip-compressed gRPC requests
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// MaxHTTPBody bounds an OTLP/HTTP request body, before and after gzip: the
// OpenTelemetry Collector's default (20 MiB). Over OTLP/gRPC a request is
// bounded by gRPC's default, 4 MiB, as in the Collector.
const MaxHTTPBody = 20 << 20

// Server serves a [Receiver] over OTLP/gRPC, OTLP/HTTP, or both.
type Server struct {
	grpcLis, httpLis net.Listener
	grpcSrv          *grpc.Server
	httpSrv          *http.Server

	errOnce sync.Once
	errc    chan error
}

// Listen listens on grpcAddr for OTLP/gRPC and on httpAddr for OTLP/HTTP
// (protobuf bodies at /v1/logs and /v1/traces) and serves r on both; an
// empty address leaves that side out. Port 0 picks a free port.
func Listen(r *Receiver, grpcAddr, httpAddr string) (*Server, error) {
	if grpcAddr == "" && httpAddr == "" {
		return nil, errors.New("otlpview: no address to listen on")
	}
	s := &Server{errc: make(chan error, 1)}
	var err error
	if grpcAddr != "" {
		if s.grpcLis, err = net.Listen("tcp", grpcAddr); err != nil {
			return nil, fmt.Errorf("OTLP/gRPC: %w", err)
		}
	}
	if httpAddr != "" {
		if s.httpLis, err = net.Listen("tcp", httpAddr); err != nil {
			if s.grpcLis != nil {
				s.grpcLis.Close()
			}
			return nil, fmt.Errorf("OTLP/HTTP: %w", err)
		}
	}
	if s.grpcLis != nil {
		s.grpcSrv = grpc.NewServer()
		r.RegisterGRPC(s.grpcSrv)
		go func() {
			if err := s.grpcSrv.Serve(s.grpcLis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				s.fail(fmt.Errorf("OTLP/gRPC: %w", err))
			}
		}()
	}
	if s.httpLis != nil {
		s.httpSrv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := s.httpSrv.Serve(s.httpLis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.fail(fmt.Errorf("OTLP/HTTP: %w", err))
			}
		}()
	}
	return s, nil
}

func (s *Server) fail(err error) { s.errOnce.Do(func() { s.errc <- err }) }

// Err delivers the error that stopped a side from serving, if one does.
func (s *Server) Err() <-chan error { return s.errc }

// GRPCAddr is the OTLP/gRPC address, "127.0.0.1:4317"; "" when not served.
func (s *Server) GRPCAddr() string {
	if s.grpcLis == nil {
		return ""
	}
	return s.grpcLis.Addr().String()
}

// HTTPAddr is the OTLP/HTTP address, "127.0.0.1:4318"; "" when not served.
func (s *Server) HTTPAddr() string {
	if s.httpLis == nil {
		return ""
	}
	return s.httpLis.Addr().String()
}

// Close stops serving at once, dropping requests in flight; what was
// received is kept.
func (s *Server) Close() {
	if s.grpcSrv != nil {
		s.grpcSrv.Stop()
	}
	if s.httpSrv != nil {
		_ = s.httpSrv.Close()
	}
}

// Shutdown stops taking requests and waits for those in flight to be
// answered, until ctx is done; then it closes what is left.
func (s *Server) Shutdown(ctx context.Context) {
	var wg sync.WaitGroup
	if s.grpcSrv != nil {
		wg.Go(func() {
			done := make(chan struct{})
			go func() { s.grpcSrv.GracefulStop(); close(done) }()
			select {
			case <-done:
			case <-ctx.Done():
				s.grpcSrv.Stop()
			}
		})
	}
	if s.httpSrv != nil {
		wg.Go(func() {
			if s.httpSrv.Shutdown(ctx) != nil {
				_ = s.httpSrv.Close()
			}
		})
	}
	wg.Wait()
}

// ServeHTTP serves OTLP/HTTP: a POST of a protobuf ExportLogsServiceRequest
// to /v1/logs, or ExportTraceServiceRequest to /v1/traces, gzip-compressed
// or not, answered with the protobuf response. Other content types are
// answered 415, a body that does not decode 400, with a google.rpc.Status.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var (
		msg  proto.Message
		take func()
		resp proto.Message
	)
	switch req.URL.Path {
	case "/v1/logs":
		m := &collogspb.ExportLogsServiceRequest{}
		msg, take, resp = m, func() { r.ExportLogs(m) }, &collogspb.ExportLogsServiceResponse{}
	case "/v1/traces":
		m := &coltracepb.ExportTraceServiceRequest{}
		msg, take, resp = m, func() { r.ExportTraces(m) }, &coltracepb.ExportTraceServiceResponse{}
	default:
		httpError(w, http.StatusNotFound, codes.NotFound, "no OTLP service at %q: logs go to /v1/logs, traces to /v1/traces", req.URL.Path)
		return
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, codes.Unimplemented, "%s: use POST", req.Method)
		return
	}
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/x-protobuf" {
		httpError(w, http.StatusUnsupportedMediaType, codes.InvalidArgument, "Content-Type %q: only application/x-protobuf is accepted", req.Header.Get("Content-Type"))
		return
	}
	body := io.Reader(http.MaxBytesReader(w, req.Body, MaxHTTPBody))
	switch enc := strings.ToLower(strings.TrimSpace(req.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			httpError(w, http.StatusBadRequest, codes.InvalidArgument, "gzip body: %v", err)
			return
		}
		defer zr.Close()
		body = zr
	default:
		httpError(w, http.StatusUnsupportedMediaType, codes.InvalidArgument, "Content-Encoding %q: only gzip is accepted", enc)
		return
	}
	data, err := io.ReadAll(io.LimitReader(body, MaxHTTPBody+1))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge) || len(data) > MaxHTTPBody:
		httpError(w, http.StatusRequestEntityTooLarge, codes.ResourceExhausted, "request body over %d bytes", MaxHTTPBody)
		return
	case err != nil:
		httpError(w, http.StatusBadRequest, codes.InvalidArgument, "reading the body: %v", err)
		return
	}
	if err := proto.Unmarshal(data, msg); err != nil {
		httpError(w, http.StatusBadRequest, codes.InvalidArgument, "body is not a protobuf %s: %v", msg.ProtoReflect().Descriptor().FullName(), err)
		return
	}
	take()
	writeProto(w, http.StatusOK, resp)
}

// httpError answers with an OTLP error: a protobuf google.rpc.Status.
func httpError(w http.ResponseWriter, code int, c codes.Code, format string, args ...any) {
	writeProto(w, code, status.Newf(c, format, args...).Proto())
}

func writeProto(w http.ResponseWriter, code int, m proto.Message) {
	data, err := proto.Marshal(m)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}
