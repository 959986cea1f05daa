package httpapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// A request carrying both Content-Length and Transfer-Encoding is the classic request
// smuggling shape: a proxy in front may frame the body by one header and this server by the
// other. It is refused with 400 and the connection closed. Go's HTTP server drops the
// Content-Length header of such a request before any handler runs, so the check reads the
// request heads off the connection itself: GuardListener wraps every accepted connection in
// an observer that follows the HTTP/1.1 framing (heads, fixed and chunked bodies) and records
// a verdict per request; GuardServer makes the server's handler look the verdict up.

// GuardListener wraps ln so every HTTP/1.1 request head is observed. With a TLS config it also
// terminates TLS: each handshake runs on its own goroutine (a slow client never holds up the
// accept loop), ALPN offers h2 and http/1.1, and an HTTP/2 connection goes to the server as the
// plain *tls.Conn (HTTP/2 frames its own bodies and forbids Transfer-Encoding, so there is no
// such shape to refuse), while an HTTP/1.1 one is observed like a plain connection.
func GuardListener(ln net.Listener, tlsConfig *tls.Config) net.Listener {
	if tlsConfig == nil {
		return &guardListener{Listener: ln}
	}
	cfg := tlsConfig.Clone()
	cfg.NextProtos = []string{"h2", "http/1.1"}
	l := &tlsGuardListener{Listener: ln, tls: cfg, accepted: make(chan accepted), done: make(chan struct{})}
	go l.acceptLoop()
	return l
}

type guardListener struct {
	net.Listener
}

func (l *guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &guardConn{Conn: c}, nil
}

// handshakeTimeout bounds a TLS handshake; a client that takes longer is dropped.
const handshakeTimeout = 10 * time.Second

type accepted struct {
	conn net.Conn
	err  error
}

type tlsGuardListener struct {
	net.Listener
	tls       *tls.Config
	accepted  chan accepted
	done      chan struct{}
	closeOnce sync.Once
}

func (l *tlsGuardListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			// The server sees the error (and backs off on temporary ones, as usual); a closed
			// listener ends the loop.
			select {
			case l.accepted <- accepted{err: err}:
			case <-l.done:
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		go l.handshake(c)
	}
}

func (l *tlsGuardListener) handshake(c net.Conn) {
	tc := tls.Server(c, l.tls)
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		_ = c.Close()
		return
	}
	var conn net.Conn = tc
	if tc.ConnectionState().NegotiatedProtocol != "h2" {
		conn = &guardConn{Conn: tc, tls: tc}
	}
	select {
	case l.accepted <- accepted{conn: conn}:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *tlsGuardListener) Accept() (net.Conn, error) {
	select {
	case a := <-l.accepted:
		return a.conn, a.err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *tlsGuardListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// GuardServer makes srv refuse the requests its GuardListener flagged. Call it after setting
// srv.Handler and serve on a GuardListener.
func GuardServer(srv *http.Server) {
	next := srv.Handler
	// The handler counts requests per connection, so every request must reach it, OPTIONS *
	// included.
	srv.DisableGeneralOptionsHandler = true
	prev := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prev != nil {
			ctx = prev(ctx, c)
		}
		if g, ok := c.(*guardConn); ok {
			ctx = context.WithValue(ctx, guardKey{}, g)
		}
		return ctx
	}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g, ok := r.Context().Value(guardKey{}).(*guardConn)
		if !ok || r.ProtoMajor != 1 {
			next.ServeHTTP(w, r)
			return
		}
		if g.nextVerdict() {
			w.Header().Set("Connection", "close")
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":"invalid_request","message":"a request may not carry both Content-Length and Transfer-Encoding","status":400}}` + "\n"))
			return
		}
		if g.tls != nil && r.TLS == nil {
			st := g.tls.ConnectionState()
			r.TLS = &st
		}
		next.ServeHTTP(w, r)
	})
}

type guardKey struct{}

// observer states.
const (
	inHead = iota
	inFixedBody
	inChunkSize
	inChunkData
	inChunkEnd
	inTrailer
	stopped // framing unknown or the connection is being refused: nothing more is read
)

// maxKeptLine is how much of a line the observer keeps: enough for a header name, a
// Content-Length value or a chunk size. Longer lines are counted, not stored.
const maxKeptLine = 256

// guardConn passes every byte through unchanged and follows the framing on the side.
type guardConn struct {
	net.Conn
	tls *tls.Conn

	mu        sync.Mutex
	state     int
	line      []byte
	remaining int64
	hasCL     bool
	hasTE     bool
	chunked   bool
	clValue   string
	lines     int
	verdicts  []bool // one per request head not yet handled, in order: true = refuse
}

func (g *guardConn) Read(p []byte) (int, error) {
	n, err := g.Conn.Read(p)
	if n > 0 {
		g.mu.Lock()
		g.observe(p[:n])
		g.mu.Unlock()
	}
	return n, err
}

// nextVerdict returns whether the next request handled on this connection must be refused.
func (g *guardConn) nextVerdict() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.verdicts) == 0 {
		// The server parsed a head the observer did not see complete: the framing
		// disagrees, so refuse rather than guess.
		return true
	}
	v := g.verdicts[0]
	g.verdicts = g.verdicts[1:]
	return v
}

func (g *guardConn) observe(b []byte) {
	for len(b) > 0 {
		switch g.state {
		case stopped:
			return
		case inFixedBody, inChunkData:
			n := int64(len(b))
			if n > g.remaining {
				n = g.remaining
			}
			g.remaining -= n
			b = b[n:]
			if g.remaining == 0 {
				if g.state == inFixedBody {
					g.state = inHead
				} else {
					g.state = inChunkEnd
				}
			}
		default:
			i := bytes.IndexByte(b, '\n')
			chunk := b
			if i >= 0 {
				chunk = b[:i]
			}
			if room := maxKeptLine - len(g.line); room > 0 {
				g.line = append(g.line, chunk[:min(len(chunk), room)]...)
			}
			if i < 0 {
				return
			}
			b = b[i+1:]
			line := bytes.TrimSuffix(g.line, []byte("\r"))
			g.endLine(line)
			g.line = g.line[:0]
		}
	}
}

// endLine advances the state machine by one complete line.
func (g *guardConn) endLine(line []byte) {
	switch g.state {
	case inHead:
		if len(line) == 0 {
			if g.lines == 0 {
				return // blank lines before a request line are tolerated
			}
			g.endHead()
			return
		}
		g.countHeaderLine(line)
	case inChunkSize:
		hex := line
		if i := bytes.IndexByte(hex, ';'); i >= 0 {
			hex = hex[:i]
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(hex)), 16, 64)
		if err != nil || size < 0 {
			g.state = stopped
			return
		}
		if size == 0 {
			g.state = inTrailer
			return
		}
		g.remaining, g.state = size, inChunkData
	case inChunkEnd:
		g.state = inChunkSize
	case inTrailer:
		if len(line) == 0 {
			g.state = inHead
		}
	}
}

func (g *guardConn) countHeaderLine(line []byte) {
	g.lines++
	if g.lines == 1 {
		return // the request line
	}
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		return
	}
	value = bytes.TrimSpace(value)
	switch {
	case bytes.EqualFold(name, []byte("Content-Length")):
		g.hasCL = true
		g.clValue = string(value)
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		g.hasTE = true
		// Go's server accepts "chunked" alone and refuses any other coding (and closes).
		g.chunked = bytes.EqualFold(value, []byte("chunked"))
	}
}

// endHead records the verdict of the head just read and finds where its body ends.
func (g *guardConn) endHead() {
	refuse := g.hasCL && g.hasTE
	g.verdicts = append(g.verdicts, refuse)
	switch {
	case refuse || (g.hasTE && !g.chunked):
		g.state = stopped
	case g.chunked:
		g.state = inChunkSize
	case g.hasCL:
		n, err := strconv.ParseInt(g.clValue, 10, 64)
		switch {
		case err != nil || n < 0:
			g.state = stopped
		case n == 0:
			g.state = inHead
		default:
			g.remaining, g.state = n, inFixedBody
		}
	default:
		g.state = inHead
	}
	g.lines, g.hasCL, g.hasTE, g.chunked, g.clValue = 0, false, false, false, ""
}
