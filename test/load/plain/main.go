// Command plain is the yardstick of make bench: a plain net/http server that answers the load
// the same bytes Formward answered (recorded by formward-load -record: the form, a 201 of an
// API submission, the public page, a page post's answer), reading each request whole and
// counting the posts in the form's submission_count as Formward does, with nothing else: no
// middleware, no validation, no storage. bench.sh runs the same load against it right after
// Formward's, so each figure has beside it what the machine does with the same I/O.
//
//	go run ./test/load/plain -addr 127.0.0.1:9000 -dir RECORDED
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
)

type recorded struct {
	Status      int    `json:"status"`
	ContentType string `json:"content_type,omitempty"`
	Location    string `json:"location,omitempty"`
	Encoding    string `json:"content_encoding,omitempty"`
	Body        []byte `json:"body"`
}

var submissionCount = regexp.MustCompile(`"submission_count":\s*[0-9]+`)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	dir := flag.String("dir", "", "folder of recorded responses (formward-load -record)")
	addrFile := flag.String("addr-file", "", "file to write the address listened on to")
	flag.Parse()
	answers := map[string]*recorded{}
	for _, kind := range []string{"form", "submit", "page", "capture"} {
		raw, err := os.ReadFile(filepath.Join(*dir, kind+".json"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		var r recorded
		if err := json.Unmarshal(raw, &r); err != nil {
			log.Fatalf("%s: %v", kind, err)
		}
		answers[kind] = &r
	}
	if len(answers) == 0 {
		log.Fatalf("no recorded responses in %q", *dir)
	}
	var posts atomic.Int64
	var base int64
	if f := answers["form"]; f != nil {
		if m := submissionCount.Find(f.Body); m != nil {
			base, _ = strconv.ParseInt(strings.TrimSpace(string(m[bytes.IndexByte(m, ':')+1:])), 10, 64)
		}
	}
	write := func(w http.ResponseWriter, r *recorded, body []byte) {
		if r.ContentType != "" {
			w.Header().Set("Content-Type", r.ContentType)
		}
		if r.Location != "" {
			w.Header().Set("Location", r.Location)
		}
		if r.Encoding != "" {
			w.Header().Set("Content-Encoding", r.Encoding)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(r.Status)
		_, _ = w.Write(body)
	}
	answer := func(kind string, w http.ResponseWriter) bool {
		r := answers[kind]
		if r == nil {
			http.Error(w, "nothing recorded for "+kind, http.StatusNotImplemented)
			return false
		}
		body := r.Body
		if kind == "form" {
			body = submissionCount.ReplaceAll(body, []byte(fmt.Sprintf(`"submission_count":%d`, base+posts.Load())))
		}
		write(w, r, body)
		return true
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := req.URL.Path
		switch {
		case req.Method == http.MethodGet && strings.HasPrefix(p, "/v1/forms/"):
			answer("form", w)
		case req.Method == http.MethodPost && strings.HasSuffix(p, "/submissions"):
			_, _ = io.Copy(io.Discard, req.Body) // the same bytes in as Formward reads
			posts.Add(1)
			answer("submit", w)
		case req.Method == http.MethodGet && strings.HasPrefix(p, "/f/"):
			answer("page", w)
		case req.Method == http.MethodPost && strings.HasPrefix(p, "/f/"):
			_ = req.ParseForm() // a urlencoded post, read and parsed as Formward's handler does
			posts.Add(1)
			answer("capture", w)
		default:
			http.NotFound(w, req)
		}
	})
	// Port 0 takes any free port; -addr-file tells the caller which (no race for a port that
	// a client connection holds as its own end).
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	log.Printf("plain: answering recorded %d kinds on %s", len(answers), ln.Addr())
	log.Fatal(http.Serve(ln, h))
}
