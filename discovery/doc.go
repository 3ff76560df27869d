// Package discovery says where a service's servers are: an [Instance] is one
// server (address, weight, tags), a [Resolver] lists a service's instances
// and lets a client [Watcher] follow changes, and a [Registry] is where a
// server announces itself while it serves.
//
// Two resolvers are built in: [Static], a list the program sets (and may
// change with [Static.Set]), and [DNS], which looks names up with the
// net package's resolver (A/AAAA records, or SRV records with their ports
// and weights) and refreshes them periodically. Registries backed by a
// shared store (etcd) live in Petrel's contrib module.
//
// Clients use a resolver through client.WithResolver; servers register
// through server.WithRegistry. This package imports neither.
package discovery
