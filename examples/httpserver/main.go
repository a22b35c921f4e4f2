// Command httpserver is a small HTTP server behind httplimit: each client
// address may make 5 requests at once and 1 more each second, and all
// clients together 100 a second. It listens on loopback only.
//
//	go run ./examples/httpserver
//	for i in 1 2 3 4 5 6; do curl -si localhost:8080/hello | head -n 1; done
//	curl -si localhost:8080/hello
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
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "loopback address to listen on")
	flag.Parse()
	ap, err := netip.ParseAddrPort(*addr)
	if err != nil || !ap.Addr().IsLoopback() {
		log.Fatalf("httpserver: -addr %q: want a loopback address and port, as 127.0.0.1:8080", *addr)
	}

	lim, err := httplimit.New([]httplimit.Policy{{
		Name:   "perip",
		Client: httplimit.Limit{Events: 1, Period: time.Second, Burst: 5},
		Global: httplimit.Limit{Name: "global", Events: 100, Period: time.Second, Burst: 100},
	}}, httplimit.WithOnDeny(func(r *http.Request, d httplimit.Decision) {
		log.Printf("denied %s %s: %s, retry in %v", d.Key, r.URL.Path, d.Limit, d.RetryAfter)
	}))
	if err != nil {
		log.Fatal(err)
	}
	expvar.Publish("httplimit", lim.Var())

	mux := http.NewServeMux()
	mux.Handle("/hello", lim.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	})))
	mux.Handle("/debug/vars", expvar.Handler()) // not limited

	ln, err := net.Listen("tcp", ap.String())
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on http://%s", ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.Serve(ln))
}
