package httpapi

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func guardedServer(t *testing.T) (addr string, bodies chan string) {
	t.Helper()
	bodies = make(chan string, 16)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- r.Method + " " + r.URL.Path + " " + string(b)
		_, _ = w.Write([]byte("ok"))
	})}
	GuardServer(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(GuardListener(ln, nil)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String(), bodies
}

// Pipelined requests, written at once or a byte at a time, keep the guard in step with the
// server: each is served, and the smuggling shape behind them is still refused.
func TestGuardFollowsPipelinedRequests(t *testing.T) {
	stream := "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" +
		"GET /b HTTP/1.1\r\nHost: x\r\n\r\n" +
		"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" +
		"POST /d HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n" +
		"POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"
	for _, split := range []bool{false, true} {
		addr, bodies := guardedServer(t)
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		go func() {
			if !split {
				_, _ = io.WriteString(conn, stream)
				return
			}
			for i := range len(stream) {
				_, _ = conn.Write([]byte{stream[i]})
			}
		}()
		br := bufio.NewReader(conn)
		var statuses []int
		for range 6 {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("split=%v: after %v: %v", split, statuses, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses = append(statuses, resp.StatusCode)
		}
		if want := []int{200, 200, 200, 200, 200, 400}; !slices.Equal(statuses, want) {
			t.Fatalf("split=%v: statuses %v, want %v", split, statuses, want)
		}
		var got []string
		for range 5 {
			got = append(got, <-bodies)
		}
		if joined := strings.Join(got, "|"); joined != "POST /a abc|GET /b |OPTIONS * |POST /c hello|POST /d " {
			t.Fatalf("split=%v: handled %q", split, joined)
		}
		if _, err := br.ReadByte(); err == nil {
			t.Fatalf("split=%v: connection open after the refusal", split)
		}
		conn.Close()
	}
}
