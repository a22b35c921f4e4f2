package redis

import (
	_ "embed"

	goredis "github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/prelude.lua
	luaPrelude string
	//go:embed lua/gcra.lua
	luaGCRA string
	//go:embed lua/window.lua
	luaWindow string
)

// The scripts run by EVALSHA, falling back to EVAL (which loads them) when
// a server answers NOSCRIPT: after a restart, on a new cluster node.
var (
	gcraScript   = goredis.NewScript(luaPrelude + luaGCRA)
	windowScript = goredis.NewScript(luaPrelude + luaWindow)
)
