package tracing

import (
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Gin makes each request a server span named after its method and route template
// ("POST /v1/forms/:id/submissions", "POST /f/:id"), never the raw path, continuing the
// caller's W3C trace context. It records the method, route, scheme and status code only: not
// the client address (respondents' addresses are only ever stored hashed), not the query (signed
// file links carry their signature there), not the headers (API keys). otelgin records all of
// these, which is why this small middleware is used instead. Install it only when tracing is on.
func Gin() gin.HandlerFunc {
	return func(c *gin.Context) {
		req := c.Request
		ctx := Extract(req.Context(), propagation.HeaderCarrier(req.Header))
		route := c.FullPath()
		name := req.Method + " " + route
		if route == "" {
			name = req.Method // unmatched: the raw path would make one span name per URL
		}
		ctx, span := Tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
		defer span.End()
		if span.IsRecording() {
			span.SetAttributes(attribute.String("http.request.method", req.Method),
				attribute.String("http.route", route), attribute.String("url.scheme", scheme(req)))
		}
		c.Request = req.WithContext(ctx)
		defer func() { c.Request = req }()
		c.Next()
		status := c.Writer.Status()
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}
