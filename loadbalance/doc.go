// Package loadbalance chooses the instance each call goes to. A [Balancer]
// is given the service's instances ([Balancer.Update], whenever discovery
// reports a change) and picks one per call ([Balancer.Pick]); a balancer
// that learns from outcomes also implements [Feedback].
//
// Four balancers are built in:
//
//   - [NewWeightedRoundRobin]: smooth weighted round robin (the nginx
//     algorithm): over a cycle each instance gets exactly its share of
//     calls, spread out rather than in bursts. With equal weights it is
//     plain round robin.
//   - [NewWeightedRandom]: each call goes to an instance drawn with
//     probability weight/total.
//   - [NewConsistentHash]: a call's key (client.WithHashKey) chooses the
//     instance on a hash ring with virtual nodes, so the same key keeps
//     going to the same instance and an instance leaving moves only its
//     own keys.
//   - [NewP2C]: power of two choices: two instances drawn at random, the
//     one with the lower cost (latency average times calls in flight,
//     divided by weight) wins; [Feedback.Done] reports each call's
//     latency.
//
// Picks allocate nothing and take no lock (except weighted round robin
// over very uneven weights, see [NewWeightedRoundRobin]). Update builds an
// immutable table that picks read through an atomic pointer, so updates do
// not slow picks down. A balancer keeps per-client state: give each client
// its own.
//
// The package imports discovery for [discovery.Instance] and nothing of
// Petrel's RPC core.
package loadbalance
