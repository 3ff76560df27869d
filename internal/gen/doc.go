// Package gen turns parsed Thrift files (package idl/thrift) into Go source:
// one Go package per Thrift file, with struct, enum, const, typedef and
// service declarations, and for every struct a binary and a compact codec
// that calls the runtime primitives of package codec/thrift. [Generate] is
// the entry point; cmd/petrel is its command-line front end.
//
// # Placement
//
// A file with `namespace go a.b.c` goes to directory a/b/c, package c; a
// file without one goes to a directory named after the file. A package name
// no file could import (a keyword, _, main or init) gets a "_" (package
// init_ in directory init). Options.Module is the import path of the output
// root; generated packages import each other (for includes) below it.
// Generate refuses, naming the Thrift files and their namespaces, what the
// go command would: paths of the output that differ only in case, an
// import of a package below an internal directory from outside that
// directory's parent, and packages that import each other in a cycle (a
// file including, directly or not, a file of another namespace that
// includes a file of the first one's).
//
// # What is generated
//
// Structs, unions and exceptions become Go structs with `thrift` and `json`
// tags. Optional scalars, strings, enums and uuids are pointers; structs are
// always pointers; optional containers and binaries use nil for unset.
// Map keys of container types are pointers (Go map keys cannot be slices or
// maps); a nil key is written as an empty container, as a nil struct is
// written as an empty struct.
// Unions are structs whose fields are all optional. For a struct X:
//
//	NewX() *X                      // applies the IDL's default values
//	(p *X) GetF() T                // value, or the default when unset (nil-safe)
//	(p *X) IsSetF() bool           // for optional and nilable fields
//	X_F_DEFAULT                    // what GetF returns when F is unset
//	(p *X) String() string         // X({F:v ...}), unset optionals <nil>; Error() too for exceptions
//	(p *X) Validate() error        // unions, and structs that can hold one (below)
//	(p *X) BLength() int
//	(p *X) FastWrite(b []byte) int
//	(p *X) FastWriteNocopy(b []byte, w thrift.NocopyWriter) int
//	(p *X) FastRead(b []byte) (int, error)
//	(p *X) FastReadDepth(b []byte, depth int) (int, error)
//	(p *X) FastReadWhole(b []byte) (int, error)
//	(p *X) BLengthCompact() int
//	(p *X) FastWriteCompact(b []byte) int
//	(p *X) FastReadCompact(b []byte) (int, error)
//	(p *X) FastReadDepthCompact(b []byte, depth int) (int, error)
//	(p *X) FastReadWholeCompact(b []byte) (int, error)
//
// Enums are `type E int64` with constants E_NAME, String, EFromString, Ptr,
// MarshalText and UnmarshalText. Typedefs of structs and enums are aliases
// (`type T = X`, so methods carry over); other typedefs are defined types.
// Constants are Go constants where Go allows, variables otherwise.
//
// For each service S and function f: SFArgs (the arguments, by their ids)
// and, unless f is oneway, SFResult (Success as field 0 unless f is void,
// then one optional field per declared exception), each with the methods
// above; every SFResult also has GetError() error, the declared exception
// set in it (nil when none). Then, for S (github.com/petrel-rpc/petrel
// client and server packages; `Echo` stands for S):
//
//	type Echo interface {            // the handler users implement; embeds the base
//		Echo(ctx context.Context, req *Req) (r *Resp, err error) // void and oneway: (err error)
//	}
//	var EchoServiceInfo *thrift.ServiceInfo // every method, inherited ones too, with Handler
//	type EchoClient interface {      // embeds the base's client, or has Close() error
//		Echo(ctx context.Context, req *Req, opts ...client.CallOption) (r *Resp, err error)
//	}
//	func NewEchoClient(destService string, opts ...client.Option) (EchoClient, error)
//	func NewEchoClientFrom(c *client.Client) EchoClient
//	func NewEchoServer(handler Echo, opts ...server.Option) *server.Server
//	func RegisterEchoService(s *server.Server, handler Echo) error
//
// Methods take the IDL's arguments in order, as the types of the Args
// fields, under lower-camel-case names (suffixed with "_" where they would
// clash with a keyword, a predeclared identifier, an import or a local).
// A function whose Go name would be Close is named Close_ (the client's
// Close is taken).
//
// Each MethodInfo.Handler asserts the handler to the interface, calls the
// method with the Args fields and stores the outcome in the Result: Success,
// or the declared exception the returned error is or wraps (a type switch,
// then errors.As), returning nil; any other error is returned as it is. An
// empty container or binary result is sent as empty, not as unset. The
// client method fills the Args and Result held in one allocation, calls
// client.Client.Call and returns Success, the declared exception as its
// own Go type (so errors.As finds it), the client's error, or an
// ApplicationException MISSING_RESULT when the reply holds nothing.
// NewEchoClient passes client.WithIDLServiceName("Echo") before opts (which
// may replace it): its TTHeader requests name the IDL service, as Kitex's
// do, so that a server with several services whose methods share a name
// routes them (a derived service's client names the derived service for
// inherited methods too).
//
// A union with more than one field set is not a Thrift union, and FastWrite
// would write every field set. Validate reports one (thrift.UnionFieldsError,
// naming the union and the count) in X or anywhere in it; a union with no
// field set is allowed. When the Args may hold a union, the client method
// calls Validate first and returns its error without sending; when the
// Result may, the Handler returns the Result's Validate error, which the
// server answers as INTERNAL_ERROR. Readers accept what they are sent.
//
// [Scaffold] (petrel gen -service) writes a server skeleton, package main:
// main.go, which serves the handler on its -addr flag, and handler.go, a
// handler whose methods return a not-implemented error.
//
// # Codecs
//
// Writers never allocate: BLength sizes the output exactly and FastWrite
// fills a buffer of that size. Everything the IDL fixes is decided at
// generation time: the sizes of all always-written fixed-size fields are
// summed into one constant; containers of fixed-size elements are sized as
// header + n*size; lists of i32, i64 and double are written and read with the
// codec's bulk slice functions; compact field headers whose delta is known
// are sized at generation time. Binary writers write each run of
// consecutive fixed-size parts (field headers, fixed-size values, container
// headers) through one array pointer, so a run costs one bounds check.
// FastWriteNocopy hands strings and binaries of at least
// thrift.NocopyThreshold bytes to the NocopyWriter by reference.
//
// Readers call thrift.CheckDepth first (nested structs are read with
// depth+1), skip unknown fields with the codec's depth-limited SkipDepth
// (or keep them, with Options.KeepUnknown, in unexported fields written back
// in either protocol: each is kept in both), skip known fields whose wire type is not the IDL's, reject
// containers whose element types are not the IDL's, and report missing
// required fields by struct and field name. FastReadDepth reads strings and
// binaries by reference into its input; FastRead first takes a private copy
// of the struct's bytes (only for structs that can hold strings), so one
// allocation serves every string of a message and the caller may reuse its
// buffer at once. On inputs over 4 KiB FastRead finds the struct's end with
// a Skip pass first; FastReadWhole, for a caller whose input holds the
// struct and nothing else (thrift.Unmarshal), copies all of it without the
// scan. Slices are allocated once, at their read size; so are maps up to
// about 64 KiB of entries, or whole when their entries' fixed wire size is
// at least their Go size; past that a map grows as its entries are read (a
// map's header is checked only against the least input its entries take,
// and a key repeated makes a map of one);
// the structs of a list, set or map are allocated as one array; a struct's
// optional scalars and its non-optional struct fields share one block,
// allocated when the first of them is read. (The price of these shared
// allocations: one live element keeps its whole block alive.)
//
// Most of the output (accessors and codec methods) is written directly in
// gofmt's layout and only indented; the rest goes through go/format, in
// parallel. Tests check that the result is a fixed point of gofmt.
package gen
