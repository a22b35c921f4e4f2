// Package surfacetest holds tests of what every user-facing package
// promises alike: go vet reports a copy of each stateful type, naming it,
// and every constructor refuses a nil Option with a *limit.ParamError. It
// has no code of its own.
package surfacetest
