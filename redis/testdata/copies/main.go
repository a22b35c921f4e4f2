// Command copies copies each stateful type of the redis module by value,
// for go vet's copylocks check to report; it is never run.
package main

import "github.com/cellrate/cellrate/redis"

func limiter(l *redis.Limiter) { c := *l; _ = &c }
func twoTier(l *redis.TwoTier) { c := *l; _ = &c }

func main() {}
