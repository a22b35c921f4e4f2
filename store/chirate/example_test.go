package chirate_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/cellrate/cellrate/store/chirate"
	"github.com/go-chi/httprate"
)

// Keep httprate's middleware and options; add WithLimitCounter.
func Example() {
	counter, err := chirate.New(chirate.Options{Capacity: 100_000})
	if err != nil {
		panic(err)
	}
	byClient := func(r *http.Request) (string, error) { return r.RemoteAddr, nil }
	limit := httprate.LimitBy(2, time.Minute, byClient, httprate.WithLimitCounter(counter))
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))

	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		fmt.Println(w.Code, w.Header().Get("X-RateLimit-Remaining"))
	}
	// Output:
	// 200 1
	// 200 0
	// 429 0
}
