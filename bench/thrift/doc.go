// Package thriftbench compares the Thrift binary codec that `petrel gen`
// generates with the one Apache Thrift's Go generator (compiler 0.17.0,
// library v0.17.0) generates, on the two payloads of the Kitex codec article:
// about 20 KB (strings, maps, lists, nested structs) and about 6 MB (large
// lists and maps of i64s, strings and structs).
//
//	cd bench && ./generate.sh && go test -run '^$' -bench . -benchmem -count 3 ./thrift/
//
// The package holds nothing but tests and benchmarks; gen-petrel/ is
// committed, gen-apache/ is written by ../generate.sh.
package thriftbench
