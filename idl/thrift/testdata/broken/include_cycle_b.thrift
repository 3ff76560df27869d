// Included by include_cycle_a.thrift.
include "include_cycle_a.thrift"
