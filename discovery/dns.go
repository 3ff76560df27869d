package discovery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultDNSRefresh is how often a DNS watcher looks its name up again.
const DefaultDNSRefresh = 30 * time.Second

// MinDNSRefresh is the shortest DNSConfig.Refresh: a shorter one would
// have every watcher look its name up (almost) without pause.
const MinDNSRefresh = time.Second

// minDNSRefresh is MinDNSRefresh; tests lower it.
var minDNSRefresh = MinDNSRefresh

// DNSConfig configures a DNS resolver. Zero fields take their defaults.
type DNSConfig struct {
	// Targets maps a service name to the name looked up for it. Without
	// SRV a target is "host:port" (the host's A and AAAA records, each
	// address with that port); with SRV it is a domain name whose SRV
	// records give hosts, ports and weights. A service missing from
	// Targets is looked up under its own name. Default: none.
	Targets map[string]string
	// SRV makes the resolver look up SRV records (RFC 2782) instead of
	// addresses: the records of the lowest priority are the instances,
	// "target:port", weighted by the record's weight (weight 0 counts as
	// 1). Default false.
	SRV bool
	// Refresh is how often watchers look their name up again (sooner
	// after a failed lookup: see DNS.Watch). Default DefaultDNSRefresh
	// (30s); at least MinDNSRefresh (1s): Validate rejects a shorter one.
	Refresh time.Duration
	// LookupHost resolves a host name to addresses. Default
	// net.DefaultResolver.LookupHost. Tests replace it.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// LookupSRV looks up SRV records as net.Resolver.LookupSRV does.
	// Default net.DefaultResolver.LookupSRV.
	LookupSRV func(ctx context.Context, service, proto, name string) (string, []*net.SRV, error)
}

// DefaultDNSConfig returns the defaults of DNSConfig.
func DefaultDNSConfig() DNSConfig {
	return DNSConfig{
		Refresh:    DefaultDNSRefresh,
		LookupHost: net.DefaultResolver.LookupHost,
		LookupSRV:  net.DefaultResolver.LookupSRV,
	}
}

// Validate reports a configuration that cannot work.
func (c *DNSConfig) Validate() error {
	if c.Refresh < 0 || (c.Refresh > 0 && c.Refresh < minDNSRefresh) {
		return fmt.Errorf("discovery: DNSConfig.Refresh is %v; it must be 0 (default) or at least %v", c.Refresh, minDNSRefresh)
	}
	return nil
}

// DNS is a Resolver that looks service names up in the DNS. Its watchers
// look the name up again every Refresh and report a changed list. The zero
// value has the defaults of DNSConfig.
type DNS struct {
	cfg DNSConfig
}

// NewDNS returns a DNS resolver configured by cfg.
func NewDNS(cfg DNSConfig) (*DNS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	def := DefaultDNSConfig()
	if cfg.Refresh == 0 {
		cfg.Refresh = def.Refresh
	}
	if cfg.LookupHost == nil {
		cfg.LookupHost = def.LookupHost
	}
	if cfg.LookupSRV == nil {
		cfg.LookupSRV = def.LookupSRV
	}
	cfg.Targets = cloneStrings(cfg.Targets)
	return &DNS{cfg: cfg}, nil
}

func cloneStrings(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// DNSError is the error of a failed lookup.
type DNSError struct {
	Service string // the service resolved
	Target  string // the name looked up
	Err     error  // the lookup's error
}

func (e *DNSError) Error() string {
	return "discovery: looking up " + strconv.Quote(e.Target) + " for service " + strconv.Quote(e.Service) + ": " + e.Err.Error()
}

func (e *DNSError) Unwrap() error { return e.Err }

// Resolve looks service's target up once.
func (d *DNS) Resolve(ctx context.Context, service string) ([]Instance, error) {
	target := service
	if t, ok := d.cfg.Targets[service]; ok {
		target = t
	}
	list, err := d.lookup(ctx, target)
	if err != nil {
		return nil, &DNSError{Service: service, Target: target, Err: err}
	}
	return list, nil
}

func (d *DNS) lookup(ctx context.Context, target string) ([]Instance, error) {
	if d.cfg.SRV {
		lookupSRV := d.cfg.LookupSRV
		if lookupSRV == nil { // a DNS made without NewDNS
			lookupSRV = net.DefaultResolver.LookupSRV
		}
		_, records, err := lookupSRV(ctx, "", "", target)
		if err != nil {
			return nil, err
		}
		return fromSRV(records), nil
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("the target is not host:port: %w", err)
	}
	if host == "" {
		return nil, errors.New("the target has no host")
	}
	if port == "" {
		return nil, errors.New("the target has no port")
	}
	// A number must be a TCP port; a name ("http") is left to the dial.
	if n, err := strconv.Atoi(port); (err == nil && (n < 1 || n > 65535)) || errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("the target's port %s is not in 1-65535", port)
	}
	lookupHost := d.cfg.LookupHost
	if lookupHost == nil { // a DNS made without NewDNS
		lookupHost = net.DefaultResolver.LookupHost
	}
	addrs, err := lookupHost(ctx, host)
	if err != nil {
		return nil, err
	}
	list := make([]Instance, 0, len(addrs))
	for _, a := range addrs {
		list = append(list, Instance{Address: net.JoinHostPort(a, port)})
	}
	return normalize(list), nil
}

// fromSRV keeps the records of the lowest priority. Records for one target
// and port make one instance, with their weights summed.
func fromSRV(records []*net.SRV) []Instance {
	// Records no one can dial (no target, the "." of a service decidedly
	// not available, port 0) are dropped before the lowest priority is
	// chosen: such a record must not hide the usable ones of the next.
	usable := func(r *net.SRV) bool { return r != nil && r.Target != "" && r.Target != "." && r.Port != 0 }
	var best uint16
	first := true
	for _, r := range records {
		if usable(r) && (first || r.Priority < best) {
			best, first = r.Priority, false
		}
	}
	var list []Instance
	for _, r := range records {
		if !usable(r) || r.Priority != best {
			continue
		}
		list = append(list, Instance{
			Address: net.JoinHostPort(strings.TrimSuffix(r.Target, "."), fmt.Sprint(r.Port)),
			Weight:  int(r.Weight),
		})
	}
	slices.SortFunc(list, byAddress)
	merged := list[:0]
	for _, in := range list {
		if n := len(merged); n > 0 && merged[n-1].Address == in.Address {
			merged[n-1].Weight += in.Weight
			continue
		}
		merged = append(merged, in)
	}
	for i := range merged {
		merged[i].Weight = max(merged[i].Weight, 1)
	}
	return merged
}

// normalize sorts by address and drops duplicates, so that lists compare.
func normalize(list []Instance) []Instance {
	slices.SortFunc(list, byAddress)
	return slices.CompactFunc(list, func(a, b Instance) bool { return a.Address == b.Address })
}

// Watch returns a Watcher that looks service up at its first Next, then
// every Refresh until the list changes. After a failed lookup it tries
// again sooner: 1s (MinDNSRefresh) after the first failure, doubling at each
// further failure in a row up to Refresh, so that a name that cannot be
// resolved at start-up is not left without instances for a whole Refresh.
// It starts no goroutine: the waiting happens in Next.
func (d *DNS) Watch(ctx context.Context, service string) (Watcher, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	life, end := context.WithCancel(context.Background())
	return &dnsWatcher{d: d, service: service, life: life, end: end}, nil
}

type dnsWatcher struct {
	d       *DNS
	service string

	// Owned by Next's caller:
	last     []Instance  // the list Next last returned
	started  bool        // Next returned a list once
	failures int         // lookups failed in a row
	timer    *time.Timer // waits Refresh; created by the first wait

	life context.Context    // canceled by Close: ends a wait or a lookup
	end  context.CancelFunc // Close
}

func (w *dnsWatcher) Next(ctx context.Context) ([]Instance, error) {
	for {
		if w.life.Err() != nil {
			return nil, ErrWatcherClosed
		}
		if w.started || w.failures > 0 {
			if err := w.wait(ctx); err != nil {
				return nil, err
			}
		}
		list, err := w.lookup(ctx)
		if w.life.Err() != nil {
			return nil, ErrWatcherClosed
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			w.failures++
			return nil, err
		}
		w.failures = 0
		if !w.started || !Equal(list, w.last) {
			w.started, w.last = true, list
			return clone(list), nil
		}
	}
}

// lookup resolves the service within ctx, or until the watcher is closed.
func (w *dnsWatcher) lookup(ctx context.Context) ([]Instance, error) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(w.life, cancel)()
	return w.d.Resolve(lctx, w.service)
}

// wait sleeps for Refresh (after failed lookups, for MinDNSRefresh doubled
// at each failure in a row, up to Refresh), or until ctx ends or the
// watcher is closed.
func (w *dnsWatcher) wait(ctx context.Context) error {
	d := w.d.refresh()
	if w.failures > 0 && w.failures < 32 {
		d = min(d, minDNSRefresh<<(w.failures-1))
	}
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return nil
	case <-w.life.Done():
		w.timer.Stop()
		return ErrWatcherClosed
	case <-ctx.Done():
		w.timer.Stop()
		return ctx.Err()
	}
}

// refresh is cfg.Refresh, or DefaultDNSRefresh in a DNS made without
// NewDNS (0 would look the name up without pause).
func (d *DNS) refresh() time.Duration {
	if d.cfg.Refresh > 0 {
		return d.cfg.Refresh
	}
	return DefaultDNSRefresh
}

func (w *dnsWatcher) Close() error {
	w.end()
	return nil
}
