package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cellrate/cellrate/httplimit"
)

// TestREADME runs the README's session against the server's handler on a
// real loopback server, at a frozen time, writes what curl prints (the
// Date field left out, as the README does), and requires the README to
// show exactly that.
func TestREADME(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	h, _, err := handler(httplimit.WithClock(func() int64 { return int64(time.Hour) }))
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: h}}
	srv.Start()
	defer srv.Close()
	base := "http://127.0.0.1:8080"
	do := func(method, path string, hdr ...string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var b strings.Builder
	b.WriteString("$ go run ./examples/httpserver &        # listens on 127.0.0.1:8080 only\n")
	fmt.Fprintf(&b, "$ for i in 1 2 3 4; do curl -s -o /dev/null -w \"%%{http_code} \" -X POST %s/login; done\n", base)
	var codes []string
	for range 4 {
		res := do("POST", "/login")
		res.Body.Close()
		codes = append(codes, fmt.Sprint(res.StatusCode))
	}
	b.WriteString(strings.Join(codes, " ") + "\n")
	fmt.Fprintf(&b, "$ curl -si -X POST %s/login\n", base)
	curl(t, &b, do("POST", "/login"))
	fmt.Fprintf(&b, "$ curl -si -H 'X-Api-Key: k1' %s/api/items\n", base)
	curl(t, &b, do("GET", "/api/items", "X-Api-Key", "k1"))
	got := b.String()
	readme, err := os.ReadFile("../../README.md")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no README.md here (a test VM holds testdata only)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```\n"+got+"```\n") {
		t.Fatalf("the README does not show what the server prints:\n%s", got)
	}
}

// curl writes res as curl -si shows a net/http server's response: the
// fields in order of their names, then Content-Length (net/http writes it
// and Date after the others); Date is left out.
func curl(t *testing.T, b *strings.Builder, res *http.Response) {
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(b, "%s %s\n", res.Proto, res.Status)
	var keys []string
	for k := range res.Header {
		if k != "Date" && k != "Content-Length" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = append(keys, "Content-Length")
	for _, k := range keys {
		for _, v := range res.Header[k] {
			fmt.Fprintf(b, "%s: %s\n", k, v)
		}
	}
	fmt.Fprintf(b, "\n%s", body)
}
