package etcd_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/petrel-rpc/petrel/contrib/etcd"
	"github.com/petrel-rpc/petrel/discovery"
)

// crashChildEnv carries "endpoint ttl address" to the registering child
// process of TestCrashRemoval.
const crashChildEnv = "PETREL_ETCD_CRASH_CHILD"

// TestCrashChild is the process TestCrashRemoval kills (it skips when run
// on its own). It registers one instance of service "Crash" with a
// Registry, prints "lease ID GRANTED_MS", then prints "ka UNIXNANO" at each
// keep-alive answer etcd sends for the lease, until its stdin closes (the
// parent went away) or it is killed.
func TestCrashChild(t *testing.T) {
	spec := os.Getenv(crashChildEnv)
	if spec == "" {
		t.Skip("the child process of TestCrashRemoval")
	}
	f := strings.Fields(spec)
	if len(f) != 3 {
		t.Fatalf("%s=%q: want endpoint ttl address", crashChildEnv, spec)
	}
	ttl, err := time.ParseDuration(f[1])
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, f[0])
	reg := newRegistry(t, etcd.Config{Client: c, TTL: ttl, Logger: quiet})
	ctx := context.Background()
	if err := reg.Register(ctx, "Crash", discovery.Instance{Address: f[2]}); err != nil {
		t.Fatal(err)
	}
	id, granted := reg.Lease()
	// A second listener of the same lease: the etcd client shares one
	// keep-alive per lease among its listeners, so this adds no request
	// and sees every answer the Registry's keep-alive gets.
	ch, err := c.KeepAlive(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("lease %d %d\n", id, granted.Milliseconds())
	go func() {
		for range ch {
			fmt.Printf("ka %d\n", time.Now().UnixNano())
		}
	}()
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0) // the parent is gone: no cleanup, as in a crash
}

// crashChild is a running TestCrashChild.
type crashChild struct {
	cmd     *exec.Cmd
	stdin   io.Closer
	lease   clientv3.LeaseID
	granted time.Duration
	lastKA  atomic.Int64 // unix nanoseconds of the last keep-alive answer it printed
}

func startCrashChild(t *testing.T, endpoint string, ttl time.Duration, addr string) *crashChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+endpoint+" "+ttl.String()+" "+addr)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &crashChild{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	leased := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		got := false
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 3 && f[0] == "lease" && !got:
				id, err1 := strconv.ParseInt(f[1], 10, 64)
				ms, err2 := strconv.ParseInt(f[2], 10, 64)
				c.lease, c.granted = clientv3.LeaseID(id), time.Duration(ms)*time.Millisecond
				got = true
				leased <- errors.Join(err1, err2)
			case len(f) == 2 && f[0] == "ka":
				if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					c.lastKA.Store(ns)
				}
			}
		}
		if !got {
			leased <- errors.New("the child exited before registering")
		}
	}()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	select {
	case err := <-leased:
		if err != nil {
			t.Fatal(err)
		}
	case <-timer.C:
		t.Fatal("the child did not register within 20 s")
	}
	return c
}

// TestCrashRemoval: a process registers an instance with Config.TTL 3 s
// and is killed with SIGKILL (no deregistration, no lease revocation, its
// keep-alives just stop). A watching resolver in this process must see the
// instance go within the configured TTL of the kill, and not before its
// lease (2 s) could have expired. Three rounds kill the child at different
// points of its keep-alive cycle.
func TestCrashRemoval(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes; about 10 s")
	}
	endpoint, _, w := watchEmpty(t, "Crash")
	const ttl = 3 * time.Second
	var worst time.Duration
	// The child's keep-alives are answered about once a second from its
	// registration: these kill it just after one (the lease's longest
	// remaining life, the worst case), half-way and just before the next.
	for round, alive := range []time.Duration{1050 * time.Millisecond, 1500 * time.Millisecond, 1950 * time.Millisecond} {
		addr := fmt.Sprintf("127.0.0.1:%d", 20001+round)
		child := startCrashChild(t, endpoint, ttl, addr)
		if list, _ := nextWithin(t, w, 2*time.Second); len(list) != 1 || list[0].Address != addr {
			t.Fatalf("round %d: after the child registered: %+v", round, list)
		}
		if child.granted <= 0 || child.granted+etcd.ExpiryAllowance > ttl {
			t.Fatalf("round %d: granted lease %v does not fit TTL %v", round, child.granted, ttl)
		}
		time.Sleep(alive) // keep-alives run
		kill := time.Now()
		if err := child.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		list, _ := nextWithin(t, w, ttl+2*time.Second)
		gone := time.Since(kill)
		if len(list) != 0 {
			t.Fatalf("round %d: after the kill: %+v", round, list)
		}
		child.cmd.Wait()
		lastKA := time.Unix(0, child.lastKA.Load())
		if child.lastKA.Load() == 0 {
			t.Fatalf("round %d: the child saw no keep-alive answer in %v", round, alive)
		}
		// The lease expires granted after etcd last renewed it, which was
		// just before the child got the answer (or after, for an answer
		// the kill cut off).
		expiry := lastKA.Add(child.granted).Sub(kill)
		t.Logf("round %d: killed %v after registering, last keep-alive answer %v before the kill; lease (granted %v) due to expire %v after the kill; instance gone at the watcher %v after the kill (configured TTL %v)",
			round, alive, kill.Sub(lastKA).Round(time.Millisecond), child.granted, expiry.Round(time.Millisecond), gone.Round(time.Millisecond), ttl)
		if gone > ttl {
			t.Errorf("round %d: the instance stayed %v after the kill, over the configured TTL %v", round, gone, ttl)
		}
		// 500 ms of slack: the answer may reach the child well after etcd
		// renewed the lease when the machine is busy.
		if gone < expiry-500*time.Millisecond {
			t.Errorf("round %d: the instance went %v after the kill, before its lease could expire (%v): not by expiry", round, gone, expiry)
		}
		worst = max(worst, gone)
	}
	t.Logf("crash removal: worst %v of 3 kills, configured TTL %v", worst.Round(time.Millisecond), ttl)
}

// TestTTLTooShortForEtcd: against an etcd whose shortest lease is 2 s (a 1 s
// election timeout), a TTL of 2 s (a 1 s lease asked for) cannot be kept:
// Register fails with ErrTTLTooShort and leaves no lease behind.
func TestTTLTooShortForEtcd(t *testing.T) {
	endpoint := startEtcd(t)
	c := newClient(t, endpoint)
	defer c.Close()
	reg := newRegistry(t, etcd.Config{Client: c, TTL: etcd.MinTTL, Logger: quiet})
	defer reg.Close()
	ctx := context.Background()
	err := reg.Register(ctx, "S", discovery.Instance{Address: "127.0.0.1:1"})
	if !errors.Is(err, etcd.ErrTTLTooShort) {
		t.Fatalf("Register with TTL %v: %v, want ErrTTLTooShort", etcd.MinTTL, err)
	}
	t.Logf("Register: %v", err)
	leases, err := c.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(leases.Leases) != 0 {
		t.Fatalf("leases left in etcd: %+v", leases.Leases)
	}
	if got, err := etcd.NewResolver(etcd.Config{Client: c}); err != nil {
		t.Fatal(err)
	} else if list, err := got.Resolve(ctx, "S"); err != nil || len(list) != 0 {
		t.Fatalf("Resolve: %+v %v", list, err)
	}
}
