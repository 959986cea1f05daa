package e2e_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/formward/formward/test/testkit"
)

// The built binary keeps /metrics off the public listener and on FORMWARD_METRICS_ADDR, and
// refuses a request carrying both Content-Length and Transfer-Encoding with 400 and a closed
// connection.
func TestPublicListenerHardening(t *testing.T) {
	t.Parallel()
	in := newInstance(t, "", "")
	// The default configuration: metrics on their own default address, not on the public one.
	in.startServe()
	resp, err := in.client.Get(in.baseURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("/metrics on the public listener: %d, want 404", resp.StatusCode)
	}
	in.stopServe()

	metricsAddr := freeAddr(t)
	in.setEnv("FORMWARD_METRICS_ADDR", metricsAddr)
	in.startServe()
	defer in.stopServe()
	var body []byte
	if !testkit.Wait(10*time.Second, func() bool {
		if resp, err = in.client.Get("http://" + metricsAddr + "/metrics"); err != nil {
			return false
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatalf("/metrics on %s: %v", metricsAddr, describe(resp, err))
	}
	if !strings.Contains(string(body), "go_goroutines") {
		t.Fatalf("metrics listener body: %.300s", body)
	}

	conn, err := net.Dial("tcp", strings.TrimPrefix(in.baseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(conn, "POST /v1/forms HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !resp.Close {
		t.Fatalf("both Content-Length and Transfer-Encoding: %d close=%v, want 400 and Connection: close", resp.StatusCode, resp.Close)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection stayed open after the refusal")
	}
}
