package discovery

import "time"

// SetMinDNSRefresh lowers the shortest DNSConfig.Refresh Validate accepts,
// so that a test can watch with a short refresh; restore puts it back.
func SetMinDNSRefresh(d time.Duration) (restore func()) {
	old := minDNSRefresh
	minDNSRefresh = d
	return func() { minDNSRefresh = old }
}

// Refresh is how long d's watchers wait between lookups.
func Refresh(d *DNS) time.Duration { return d.refresh() }
