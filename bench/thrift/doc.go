// Package thriftbench compares the Thrift binary codec that `petrel gen`
// generates with the one Apache Thrift's Go generator (compiler 0.17.0,
// library v0.17.0) generates, on three payloads: small (~19 KB, a typical
// RPC response) and large (~6 MB, built from large containers), the two
// cases of the Kitex codec article, and maps (~19 KB, dominated by small
// map<string, string>). bench/README.md ("Thrift codec benchmark") gives
// their composition and what each benchmark measures.
//
//	cd bench && ./generate.sh && go test -run '^$' -bench 'Marshal|Unmarshal' -benchmem -count 5 ./thrift/
//
// The package holds nothing but tests and benchmarks; gen-petrel/ is
// committed, gen-apache/ is written by ../generate.sh.
package thriftbench
