package limit

import (
	"errors"
	"fmt"
)

var (
	// ErrNegativeCost reports a request for a negative number of units.
	ErrNegativeCost = errors.New("limit: n is negative")
	// ErrCostExceedsBurst reports a request for more units than the
	// limiter can ever hold at once: it would be denied forever.
	ErrCostExceedsBurst = errors.New("limit: n exceeds the burst")
)

// ParamError reports a constructor, setter or option parameter out of range.
// Every cellrate package returns one (as *ParamError) for a parameter it
// refuses, so callers can find which parameter and which values fit with
// errors.As instead of parsing the message.
type ParamError struct {
	// Pkg is the package that refused the value: "gcra", "bucket", ...
	Pkg string
	// Param is the parameter's documented name: "events", "period",
	// "burst", "rate", "limit", "window", "batch", ...
	Param string
	// Value is the value given, in the parameter's own type.
	Value any
	// Min and Max are the smallest and the largest value that fit, given
	// the other parameters, in the parameter's type; nil when that side is
	// unbounded.
	Min, Max any
	// Reason says why, when the range alone does not (for example "a token
	// must take at least 1ns to refill"); empty otherwise.
	Reason string
}

func (e *ParamError) Error() string {
	format := "%s: %s %v out of range"
	if _, ok := e.Value.(string); ok {
		format = "%s: %s %q out of range" // a refused string can hold spaces, colons, or nothing
	}
	msg := fmt.Sprintf(format, e.Pkg, e.Param, e.Value)
	switch {
	case e.Min != nil && e.Max != nil:
		msg += fmt.Sprintf(" [%v, %v]", e.Min, e.Max)
	case e.Min != nil:
		msg += fmt.Sprintf(" (must be >= %v)", e.Min)
	case e.Max != nil:
		msg += fmt.Sprintf(" (must be <= %v)", e.Max)
	}
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	return msg
}
