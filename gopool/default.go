package gopool

import "context"

// defaultPool serves the package-level Go and CtxGo. DefaultConfig always
// validates, so New cannot fail here.
var defaultPool, _ = New(DefaultConfig())

// Go runs f on the package's default pool (see [Pool.Go]). The default pool
// has DefaultMaxWorkers workers, drops panics and is never closed.
func Go(f func()) {
	defaultPool.Go(f)
}

// CtxGo runs f on the package's default pool (see [Pool.CtxGo]).
func CtxGo(ctx context.Context, f func()) {
	defaultPool.CtxGo(ctx, f)
}
