//go:build linux

package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/transport"
)

// TestCloseEndsDial: a call dialing an address whose connect hangs (the
// accept queue is full) when the client is closed ends promptly with the
// client-closed error, as a call waiting for its reply does. The dial ran
// on to the connect timeout (with WithConnectTimeout(0) and no deadline,
// the kernel's ~2 minutes of SYN retries) and failed with its error.
func TestCloseEndsDial(t *testing.T) {
	addr := blackhole(t)
	for _, s := range ttheaderSetups() {
		t.Run(s.name, func(t *testing.T) {
			c := newClient(t, addr, s, client.WithConnectTimeout(3*time.Second), client.WithRPCTimeout(0))
			done := make(chan error, 1)
			go func() {
				_, err := echo(context.Background(), c, &echoArgs{})
				done <- err
			}()
			time.Sleep(100 * time.Millisecond) // the call is dialing
			c.Close()
			start := time.Now()
			err := <-done
			if d := time.Since(start); d > time.Second {
				t.Errorf("a call dialing at Close ended %v after Close returned (err: %v), want promptly", d.Round(time.Millisecond), err)
			}
		})
	}
}

// TestMuxWaiterDoesNotDialAfterClose: on the multiplexed pool, a call
// waiting for another caller's dial of its slot when the client is closed
// fails then; it dialed again itself once that dial ended, each waiter
// adding one more connect timeout after Close.
func TestMuxWaiterDoesNotDialAfterClose(t *testing.T) {
	addr := blackhole(t)
	c := newClient(t, addr, setup{proto: transport.TTHeader, pool: client.WithMuxConnection(1)},
		client.WithConnectTimeout(time.Second), client.WithRPCTimeout(0))
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { _, err := echo(context.Background(), c, &echoArgs{}); first <- err }()
	time.Sleep(50 * time.Millisecond) // the first call dials the only slot
	go func() { _, err := echo(context.Background(), c, &echoArgs{}); second <- err }()
	time.Sleep(50 * time.Millisecond) // the second waits for that dial
	c.Close()
	start := time.Now()
	<-first
	err := <-second
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("the call waiting for a dial at Close ended %v after Close (err: %v); it dialed again after Close", d.Round(time.Millisecond), err)
	}
}
