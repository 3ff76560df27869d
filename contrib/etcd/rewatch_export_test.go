package etcd

import "github.com/petrel-rpc/petrel/discovery"

// WatchFrom restarts w's etcd watch from revision rev+1, as if its last
// read had been at rev. Call it from the goroutine calling Next.
func WatchFrom(w discovery.Watcher, rev int64) {
	ww := w.(*watcher)
	ww.stop()
	ww.start(rev)
}
