package delivery

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestBreakerCountsByState(t *testing.T) {
	h := newCounter(http.StatusInternalServerError)
	srv, ca := tlsServer(t, h)
	c := newClient(t, Options{AllowPrivate: true, ExtraCAFile: ca, BreakerFailures: 1, BreakerCooldown: time.Hour})
	if cl, half, open := c.BreakerCounts(); cl+half+open != 0 {
		t.Fatalf("a new client counts %d, %d, %d breakers", cl, half, open)
	}
	a := request(srv.URL + "/hook")
	a.EndpointID = "whk_a"
	b := request(srv.URL + "/hook")
	b.EndpointID = "whk_b"
	c.Deliver(context.Background(), a) // one failure opens whk_a
	h.status.Store(http.StatusOK)
	c.Deliver(context.Background(), b)
	if cl, half, open := c.BreakerCounts(); cl != 1 || half != 0 || open != 1 {
		t.Fatalf("counts closed %d, half-open %d, open %d; want 1, 0, 1", cl, half, open)
	}
}
