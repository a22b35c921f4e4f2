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
	"strings"
	"testing"
	"time"

	"github.com/cellrate/cellrate/httplimit"
)

// TestREADME runs the README's session against the server's handler on a
// real loopback server, at a frozen time, writes what curl -si prints (the
// Date field left out, as the README does), and requires the README to
// show exactly that. Each response is read from the connection as it
// arrives, so the fields are in the order net/http wrote them, as curl
// shows them.
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
	addr := ln.Addr().String()
	base := "http://127.0.0.1:8080"
	var b strings.Builder
	b.WriteString("$ go run ./examples/httpserver &        # listens on 127.0.0.1:8080 only\n")
	fmt.Fprintf(&b, "$ for i in 1 2 3 4; do curl -s -o /dev/null -w \"%%{http_code} \" -X POST %s/login; done\n", base)
	var codes []string
	for range 4 {
		code, _ := curl(t, addr, "POST", "/login")
		codes = append(codes, code)
	}
	b.WriteString(strings.Join(codes, " ") + "\n")
	fmt.Fprintf(&b, "$ curl -si -X POST %s/login\n", base)
	_, out := curl(t, addr, "POST", "/login")
	b.WriteString(out)
	fmt.Fprintf(&b, "$ curl -si -H 'X-Api-Key: k1' %s/api/items\n", base)
	_, out = curl(t, addr, "GET", "/api/items", "X-Api-Key: k1")
	b.WriteString(out)
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

// curl sends one request to addr on a connection of its own, as curl
// does, and returns the status code and the response as curl -si prints
// it: the status line and the fields in the order they arrived (Date left
// out), a blank line, the body.
func curl(t *testing.T, addr, method, path string, fields ...string) (code, out string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	req := method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n"
	for _, f := range fields {
		req += f + "\r\n"
	}
	if _, err := io.WriteString(c, req+"Connection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := strings.Cut(string(raw), "\r\n\r\n")
	if !ok {
		t.Fatalf("no end of header in %q", raw)
	}
	var b strings.Builder
	for i, line := range strings.Split(head, "\r\n") {
		switch {
		case i == 0:
			if _, rest, ok := strings.Cut(line, " "); ok {
				code, _, _ = strings.Cut(rest, " ")
			}
		case strings.HasPrefix(line, "Date: "), strings.HasPrefix(line, "Connection: "):
			continue // Date changes; Connection answers this function's close
		}
		b.WriteString(line + "\n")
	}
	return code, b.String() + "\n" + body
}
