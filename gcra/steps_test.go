package gcra

import "github.com/cellrate/cellrate/internal/gcrastep"

// The tests run the pure steps under the names they had here.
type (
	Params = gcrastep.Params
	State  = gcrastep.State
)

var (
	NewParams  = gcrastep.NewParams
	RateParams = gcrastep.RateParams
)

// NewFromParams returns a full Limiter with Params ps.
func NewFromParams(ps Params, opts ...Option) (*Limiter, error) { return fromParams(ps, opts...) }
