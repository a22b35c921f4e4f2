// Command copies copies each stateful cellrate type by value, for go vet's
// copylocks check to report; it is never run.
package main

import (
	"github.com/cellrate/cellrate/adaptive"
	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/coalesce"
	"github.com/cellrate/cellrate/concurrency"
	"github.com/cellrate/cellrate/debounce"
	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/httplimit"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/pacer"
	"github.com/cellrate/cellrate/packed64"
	"github.com/cellrate/cellrate/rate"
	"github.com/cellrate/cellrate/slidelog"
	"github.com/cellrate/cellrate/step"
	"github.com/cellrate/cellrate/striped"
	"github.com/cellrate/cellrate/window"
)

func gcraLimiter(l *gcra.Limiter)           { c := *l; _ = &c }
func bucketLimiter(l *bucket.Limiter)       { c := *l; _ = &c }
func windowLimiter(l *window.Limiter)       { c := *l; _ = &c }
func slidelogLimiter(l *slidelog.Limiter)   { c := *l; _ = &c }
func packedBucket(l *packed64.Bucket)       { c := *l; _ = &c }
func packedWindow(l *packed64.Window)       { c := *l; _ = &c }
func packedBuckets(l *packed64.Buckets)     { c := *l; _ = &c }
func packedWindows(l *packed64.Windows)     { c := *l; _ = &c }
func stripedLimiter(l *striped.Limiter)     { c := *l; _ = &c }
func stripedCounter(l *striped.Counter)     { c := *l; _ = &c }
func rateLimiter(l *rate.Limiter)           { c := *l; _ = &c }
func pacerPacer(l *pacer.Pacer)             { c := *l; _ = &c }
func adaptiveThrottle(l *adaptive.Throttle) { c := *l; _ = &c }
func debounceDebouncer(l *debounce.Debouncer) {
	c := *l
	_ = &c
}
func coalesceGroup(l *coalesce.Group[string, int]) { c := *l; _ = &c }

func keyedTable(l *keyed.Table)                 { c := *l; _ = &c }
func httplimitLimiter(l *httplimit.Limiter)     { c := *l; _ = &c }
func concurrencyLimiter(l *concurrency.Limiter) { c := *l; _ = &c }
func adaptiveAIMD(l *adaptive.AIMD)             { c := *l; _ = &c }

func rateReservation(l *rate.Reservation)   { c := *l; _ = &c }
func rateSometimes(l *rate.Sometimes)       { c := *l; _ = &c }
func stepHighWater(l *step.HighWater)       { c := *l; _ = &c }
func nanotimeCoarse(l *nanotime.Coarse)     { c := *l; _ = &c }
func atomic128Pair(l *atomic128.Uint64Pair) { c := *l; _ = &c }

func main() {}
