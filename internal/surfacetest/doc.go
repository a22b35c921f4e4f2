// Package surfacetest holds tests of what every user-facing package
// promises alike: zero values admit nothing and never panic, go vet reports
// a copy of each stateful type, naming it, every constructor refuses a nil
// Option with a *limit.ParamError, spans of time are time.Durations, go
// doc names nothing internal, and each package's exported surface stays
// small. It has no code of its own.
package surfacetest
