package main

import (
	"context"
	"fmt"
	"log"
	"runtime"
	"time"

	"github.com/cellrate/cellrate/bench/paired"
)

// measure builds and measures every pair of specs, in order, at each of
// its goroutine counts; a group per spec and count.
func measure(ctx context.Context, specs []groupSpec, cfg config) ([]group, error) {
	var out []group
	for _, s := range specs {
		gs := make([]group, len(s.gs))
		for i, g := range s.gs {
			gs[i] = group{ID: s.id, Title: s.title, Kind: s.kind, G: g}
		}
		start := time.Now()
		for _, p := range s.pairs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			ours, base, err := p.build()
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", s.id, p.label, err)
			}
			for i, g := range s.gs {
				a, b, err := paired.Measure(ours, base, paired.Config{Rounds: cfg.Rounds, Turn: cfg.Turn, G: g})
				if err != nil {
					return nil, fmt.Errorf("%s, %s: %w", s.id, p.label, err)
				}
				gs[i].Rows = append(gs[i].Rows, row{Label: p.label, Ours: a, Base: b})
			}
			runtime.GC() // the pair's garbage, not during the next one
		}
		log.Printf("%s: %d pairs in %v", s.id, len(s.pairs), time.Since(start).Round(time.Millisecond))
		out = append(out, gs...)
	}
	return out, nil
}
