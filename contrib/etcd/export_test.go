package etcd

import "github.com/petrel-rpc/petrel/discovery"

// LoseWatch leaves w as a resync that failed leaves it (etcd unreachable
// when a broken watch was to be read again): no etcd watch, the instances to
// be read again at the next Next. Call it from the goroutine calling Next.
func LoseWatch(w discovery.Watcher) {
	ww := w.(*watcher)
	ww.stop()
	ww.ch = nil
}
