namespace go x
include "no/such/file.thrift"
