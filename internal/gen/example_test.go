package gen_test

import (
	"fmt"

	"github.com/petrel-rpc/petrel/idl/thrift"
	"github.com/petrel-rpc/petrel/internal/gen"
)

func ExampleGenerate() {
	src := `namespace go example.hello
struct Greeting {
  1: required string text
  2: optional i32 times = 1
}
service Hello {
  Greeting greet(1: string name)
}`
	f, err := thrift.Parse("hello.thrift", []byte(src), thrift.ParseOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	files, err := gen.Generate(f, gen.Options{Module: "example.com/out"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, gf := range files {
		fmt.Println(gf.Path)
	}
	// Output:
	// example/hello/hello.go
}
