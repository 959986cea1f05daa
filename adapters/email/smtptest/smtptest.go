// Package smtptest is a real SMTP server in-process (emersion/go-smtp) on a loopback port,
// collecting the messages it accepts, for the email adapter's tests and the black-box tests.
package smtptest

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Options shape a Server.
type Options struct {
	// TLS, when set, is offered with STARTTLS.
	TLS *tls.Config
	// User and Password, when User is set, are the only credentials the server accepts, with
	// AUTH PLAIN (over TLS only), and it refuses MAIL before AUTH.
	User, Password string
	// RefuseFirst answers 451 the first time an address comes as the first recipient of a
	// message, so every send's first attempt is refused, and only that one (retries tested).
	RefuseFirst bool
	// Timeout is the server's read and write timeout; 5s when zero.
	Timeout time.Duration
}

// Message is one message the server accepted.
type Message struct {
	From  string
	Rcpts []string
	// Data is the message as sent; Header and Body are its parsed halves.
	Data   []byte
	Header netmail.Header
	Body   []byte
	// TLS tells whether the message came over STARTTLS; Authed names the user it came from
	// after AUTH.
	TLS    bool
	Authed string
}

// Server is a running SMTP server. A recipient at rejected.example is refused with 550.
type Server struct {
	// Addr is the server's host:port.
	Addr string
	opts Options

	mu      sync.Mutex
	msgs    []Message
	seen    map[string]bool
	refused int
}

// Start serves a Server on a loopback port until t ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	srv := &Server{opts: opts, seen: map[string]bool{}}
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		sess := &session{srv: srv, conn: c}
		if opts.User != "" {
			return &authSession{sess}, nil
		}
		return sess, nil
	}))
	s.Domain = "localhost"
	s.ReadTimeout = opts.Timeout
	s.WriteTimeout = opts.Timeout
	s.TLSConfig = opts.TLS
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Addr = l.Addr().String()
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() { _ = s.Close() })
	return srv
}

// Messages are the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Refused is how many first deliveries RefuseFirst refused.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

type session struct {
	srv   *Server
	conn  *smtp.Conn
	cur   Message
	rcpts int // RCPT commands in this message
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.srv.opts.User != "" && s.cur.Authed == "" {
		return smtp.ErrAuthRequired
	}
	_, s.cur.TLS = s.conn.TLSConnectionState()
	s.cur.From = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.rcpts++
	if strings.HasSuffix(to, "@rejected.example") {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	if s.srv.opts.RefuseFirst && s.rcpts == 1 && s.srv.firstTime(to) {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	s.cur.Rcpts = append(s.cur.Rcpts, to)
	return nil
}

// firstTime records that to came as a first recipient, and counts a refusal the first time.
func (s *Server) firstTime(to string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[to] {
		return false
	}
	s.seen[to] = true
	s.refused++
	return true
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.Data = data
	m, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return err
	}
	s.cur.Header = m.Header
	if s.cur.Body, err = io.ReadAll(m.Body); err != nil {
		return err
	}
	s.srv.mu.Lock()
	s.srv.msgs = append(s.srv.msgs, s.cur)
	s.srv.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur, s.rcpts = Message{Authed: s.cur.Authed}, 0 }
func (s *session) Logout() error { return nil }

// authSession is a session that offers AUTH PLAIN.
type authSession struct{ *session }

func (s *authSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *authSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.srv.opts.User || pass != s.srv.opts.Password {
			return errors.New("bad credentials")
		}
		s.cur.Authed = user
		return nil
	}), nil
}

// Subject is the message's decoded Subject header.
func (m Message) Subject(t testing.TB) string {
	t.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// MediaType is the media type of the message's Content-Type.
func (m Message) MediaType(t testing.TB) string {
	t.Helper()
	mt, _, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	return mt
}

// Parts are the message's decoded parts by media type: one for a single-part message, each
// alternative of a multipart/alternative one; any other multipart message fails t.
func (m Message) Parts(t testing.TB) map[string]string {
	t.Helper()
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		return map[string]string{mt: decode(t, m.Header.Get("Content-Transfer-Encoding"), m.Body)}
	}
	if mt != "multipart/alternative" {
		t.Fatalf("Content-Type %s, want multipart/alternative", mt)
	}
	out := map[string]string{}
	mr := multipart.NewReader(bytes.NewReader(m.Body), params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(p)
		pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out[pt] = decode(t, p.Header.Get("Content-Transfer-Encoding"), raw)
	}
	return out
}

// decode undoes a quoted-printable or base64 Content-Transfer-Encoding.
func decode(t testing.TB, cte string, raw []byte) string {
	t.Helper()
	var err error
	switch strings.ToLower(cte) {
	case "quoted-printable":
		raw, err = io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
	case "base64":
		raw, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(raw)), ""))
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
