// Command httpserver is a small HTTP server behind httplimit, with a
// policy per route, each keyed its own way: POST /login by client
// address, 3 attempts at once and 1 more every 10 s; /api/ by API key
// (X-Api-Key), else by address, 5 requests at once and 1 more each
// second, and all of /api/ together 100 a second. It listens on loopback
// only.
//
//	go run ./examples/httpserver
//	for i in 1 2 3 4; do curl -s -o /dev/null -w "%{http_code} " -X POST http://127.0.0.1:8080/login; done
//	curl -si -H 'X-Api-Key: k1' http://127.0.0.1:8080/api/items
//
// Its counts are at /debug/vars (expvar).
package main

import (
	"expvar"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/cellrate/cellrate/httplimit"
	"github.com/cellrate/cellrate/httplimit/clientkey"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "loopback address to listen on")
	flag.Parse()
	ap, err := netip.ParseAddrPort(*addr)
	if err != nil || !ap.Addr().IsLoopback() {
		log.Fatalf("httpserver: -addr %q: want a loopback address and port, as 127.0.0.1:8080", *addr)
	}
	h, lim, err := handler()
	if err != nil {
		log.Fatal(err)
	}
	expvar.Publish("httplimit", expvar.Func(func() any { return lim.Stats() }))
	ln, err := net.Listen("tcp", ap.String())
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on http://%s", ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}

// handler is the server's mux behind the limiter (opts: a test's clock).
func handler(opts ...httplimit.Option) (http.Handler, *httplimit.Limiter, error) {
	opts = append(opts, httplimit.WithDenyHandler(func(w http.ResponseWriter, r *http.Request, d httplimit.Decision) {
		log.Printf("denied %s %s: %s, retry in %v", d.Key, r.URL.Path, d.Limit, d.RetryAfter)
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
	}))
	lim, err := httplimit.New([]httplimit.Policy{{
		Name:   "login",
		Routes: []string{"POST /login"},
		Key:    clientkey.Peer,
		Client: httplimit.Rate(1, 10*time.Second, 3),
	}, {
		Name:   "api",
		Routes: []string{"/api/"},
		Key:    clientkey.First(clientkey.Header("X-Api-Key"), clientkey.Peer),
		Client: httplimit.Rate(1, time.Second, 5),
		Global: httplimit.Rate(100, time.Second, 100),
	}}, opts...)
	if err != nil {
		return nil, nil, err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "welcome")
	})
	mux.HandleFunc("GET /api/items", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, "[]")
	})
	mux.Handle("/debug/vars", expvar.Handler()) // not limited
	return lim.Wrap(mux), lim, nil
}
