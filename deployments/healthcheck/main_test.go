package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-r.Context().Done() // answers only once the client gave up
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()

	if err := check(srv.URL+"/readyz", time.Second); err != nil {
		t.Errorf("200: %v, want healthy", err)
	}
	status = http.StatusServiceUnavailable
	if err := check(srv.URL+"/readyz", time.Second); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("503: %v, want unhealthy naming the status", err)
	}
	status = http.StatusOK
	if err := check(srv.URL+"/slow", 50*time.Millisecond); err == nil {
		t.Error("an answer after the timeout counted as healthy")
	}
	addr := srv.Listener.Addr().String()
	srv.Close()
	if err := check("http://"+addr+"/readyz", time.Second); err == nil {
		t.Error("a closed port counted as healthy")
	}
}
