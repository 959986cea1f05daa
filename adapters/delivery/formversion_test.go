package delivery

import (
	"context"
	"net/http"
	"testing"
)

// A delivery of a submission's event says the form version in X-Service-Form-Version and keeps
// its body; a delivery without a version sends no such header.
func TestDeliverFormVersionHeader(t *testing.T) {
	h, last := recorder(t)
	srv, ca := tlsServer(t, h)
	c := newClient(t, Options{AllowPrivate: true, ExtraCAFile: ca})

	r := request(srv.URL + "/hook")
	r.FormVersion = 4
	if res := c.Deliver(context.Background(), r); res.Err != nil || res.StatusCode != http.StatusNoContent {
		t.Fatalf("result = %+v", res)
	}
	got := last()
	if v := got.header.Get("X-Service-Form-Version"); v != "4" {
		t.Errorf("X-Service-Form-Version = %q, want 4", v)
	}
	if string(got.body) != string(r.Body) {
		t.Errorf("body = %q, want %q", got.body, r.Body)
	}

	if res := c.Deliver(context.Background(), request(srv.URL+"/hook")); res.Err != nil {
		t.Fatalf("result = %+v", res)
	}
	if v, ok := last().header["X-Service-Form-Version"]; ok {
		t.Errorf("X-Service-Form-Version = %q on a delivery without a version", v)
	}
}
