package server

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 connections"}, {1, "1 connection"}, {2, "2 connections"}, {-1, "-1 connections"}} {
		if got := count(c.n, "connection", "connections"); got != c.want {
			t.Errorf("count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
