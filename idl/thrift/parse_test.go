package thrift_test

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/petrel-rpc/petrel/idl/thrift"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixtures are the good IDL files; each has a golden dump in
// testdata/golden/<name>.txt.
var fixtures = []struct {
	name, path  string
	includeDirs []string
}{
	{"includes", "testdata/includes/main.thrift", []string{"testdata/includes/incdir"}},
	{"keywords", "testdata/keywords.thrift", nil},
	{"recursive", "testdata/recursive.thrift", nil},
	{"containers", "testdata/containers.thrift", nil},
	{"defaults", "testdata/defaults.thrift", nil},
	{"unions", "testdata/unions.thrift", nil},
	{"exceptions", "testdata/exceptions.thrift", nil},
	{"services", "testdata/services.thrift", nil},
	{"annotations", "testdata/annotations.thrift", nil},
	{"comments", "testdata/comments.thrift", nil},
	{"uuid", "testdata/uuid.thrift", nil},
	{"enums", "testdata/enums.thrift", nil},
}

func TestGolden(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			f, err := thrift.ParseFile(fx.path, thrift.ParseOptions{IncludeDirs: fx.includeDirs})
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			got := dump(f)
			golden := filepath.Join("testdata", "golden", fx.name+".txt")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("dump differs from %s (run go test -update and review the diff):\n%s", golden, firstDiff(string(want), got))
			}
		})
	}
}

// firstDiff shows the first differing line.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n want: " + wl + "\n  got: " + gl
		}
	}
	return ""
}
