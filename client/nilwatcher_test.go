package client_test

import (
	"context"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/client"
	"github.com/petrel-rpc/petrel/discovery"
	"github.com/petrel-rpc/petrel/rpcerr"
)

// resolveOnly is a resolver that does not watch: its Watch returns no
// Watcher and no error, as a stub of an unsupported method might.
type resolveOnly struct{}

func (resolveOnly) Resolve(context.Context, string) ([]discovery.Instance, error) {
	return nil, nil
}

func (resolveOnly) Watch(context.Context, string) (discovery.Watcher, error) { return nil, nil }

// TestResolverWithoutWatcher: a resolver whose Watch returns neither a
// Watcher nor an error fails the calls with an error saying so, and the
// client closes. Before, the client's watching goroutine called Next on
// the nil Watcher and the panic ended the process.
func TestResolverWithoutWatcher(t *testing.T) {
	c, err := client.New("Echo", client.WithResolver(resolveOnly{}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = echo(context.Background(), c, &echoArgs{})
	if rpcerr.CodeOf(err) != rpcerr.Connection || !strings.Contains(err.Error(), "Watch") || !strings.Contains(err.Error(), "Echo") {
		t.Fatalf("call with a resolver returning no watcher: %v; want a Connection error naming Watch and the service", err)
	}
}
