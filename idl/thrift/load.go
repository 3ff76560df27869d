package thrift

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultMaxDepth is the nesting limit for type expressions and constant
// values used when ParseOptions.MaxDepth is 0.
const DefaultMaxDepth = 64

// ParseOptions configures [ParseFile] and [Parse]. The zero value is ready to
// use.
type ParseOptions struct {
	// IncludeDirs are searched, in order, for an include that is not found
	// relative to the including file (the -I flag of the compiler).
	IncludeDirs []string
	// ReadFile reads an IDL file. Nil means os.ReadFile, and then a main
	// file or include that is a device, named pipe or socket is refused
	// without being read (/dev/zero never ends; a pipe blocks). A not-found error
	// must satisfy errors.Is(err, fs.ErrNotExist) for the search to go on to
	// the next directory.
	//
	// A file is loaded once however it is reached. With os.ReadFile files
	// are told apart by where they really are (the absolute path with every
	// symbolic link resolved), so that idl/common.thrift and the same file
	// found through an absolute include directory, or through a symbolic
	// link, are one file, and a file that includes itself through a link is
	// an include cycle. With a ReadFile of its own they are told apart by
	// their cleaned paths, which are all that ReadFile is given.
	ReadFile func(path string) ([]byte, error)
	// MaxDepth limits how deeply type expressions and constant values may
	// nest (list<list<...>>, [[...]]). 0 means DefaultMaxDepth.
	MaxDepth int
}

// ParseFile parses the IDL file at path and every file it includes (each
// once), resolves every name, and runs the checks. On any problem it returns
// an [ErrorList] holding every error found, sorted by position; syntax and
// include errors stop the checks, so that one mistake does not cause many
// messages.
func ParseFile(path string, opts ParseOptions) (*File, error) {
	ld := newLoader(opts)
	p := filepath.Clean(path)
	if ld.osFS {
		if kind := specialFile(p); kind != "" {
			return nil, ErrorList{{Pos: Pos{File: p}, Msg: "cannot read IDL file: " + p + " is a " + kind + ", not a regular file"}}
		}
	}
	src, err := ld.read(p)
	if err != nil {
		return nil, ErrorList{{Pos: Pos{File: p}, Msg: "cannot read IDL file: " + err.Error(), Err: err}}
	}
	return ld.run(p, src)
}

// Parse is [ParseFile] for a main file held in memory; name is its path,
// used in positions and to find its includes.
func Parse(name string, src []byte, opts ParseOptions) (*File, error) {
	ld := newLoader(opts)
	return ld.run(filepath.Clean(name), src)
}

type loader struct {
	opts    ParseOptions
	osFS    bool             // ReadFile is os.ReadFile: includes are checked with os.Stat first
	files   map[string]*File // by identity (see identity)
	order   []*File          // every file, the main file first
	stack   []*File          // files whose includes are being loaded
	onStack map[string]int   // the index in stack of each of those files, by identity
	errs    ErrorList
}

func newLoader(opts ParseOptions) *loader {
	osFS := opts.ReadFile == nil
	if osFS {
		opts.ReadFile = os.ReadFile
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	return &loader{opts: opts, osFS: osFS, files: map[string]*File{}, onStack: map[string]int{}}
}

func (ld *loader) read(path string) ([]byte, error) { return ld.opts.ReadFile(path) }

// identity names the file at the cleaned path p for telling files apart.
// Reading the file system, it is where the file really is: the absolute
// path with every symbolic link resolved. Keyed by spelling, a file reached
// as idl/common.thrift and as /abs/idl/common.thrift was loaded twice, and
// a file reached through a link to "." (sub/a.thrift, sub/sub/a.thrift, ...)
// was new at every step, so a cycle through the link was never seen and two
// such links made the loads double at each level. If p cannot be resolved
// (it does not exist, or is a name given to Parse) its directory is, and
// failing that its absolute path is used. With a ReadFile of its own, p is
// the identity. The file keeps the path it was first reached by, in
// messages and for finding its own includes.
func (ld *loader) identity(p string) string {
	if !ld.osFS {
		return p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

func (ld *loader) run(path string, src []byte) (*File, error) {
	main := ld.load(path, ld.identity(path), src)
	if len(ld.errs) > 0 {
		return nil, sortErrors(ld.errs)
	}
	c := &checker{files: ld.order}
	c.run()
	if len(c.errs) > 0 {
		return nil, sortErrors(c.errs)
	}
	return main, nil
}

// load parses a file, found at path and known by id (see identity), and,
// depth first, the files it includes.
func (ld *loader) load(path, id string, src []byte) *File {
	f, perr := parse(path, src, ld.opts.MaxDepth)
	ld.files[id] = f
	ld.order = append(ld.order, f)
	if perr != nil {
		ld.errs = append(ld.errs, perr)
		return f
	}
	ld.onStack[id] = len(ld.stack)
	ld.stack = append(ld.stack, f)
	defer func() {
		ld.stack = ld.stack[:len(ld.stack)-1]
		delete(ld.onStack, id)
	}()
	for _, inc := range f.Includes {
		target, id, data, err := ld.find(f.Path, inc.Path)
		if err != nil {
			ld.errs = append(ld.errs, &Error{Pos: inc.Pos, Msg: err.Error(), Err: errors.Unwrap(err)})
			continue
		}
		if prev, ok := f.IncludeMap[inc.Name]; ok {
			if ld.files[id] == prev {
				inc.File = prev // the same file included again, as Apache's compiler allows
				continue
			}
			ld.errs = append(ld.errs, &Error{Pos: inc.Pos, Msg: "include name " + strconv.Quote(inc.Name) +
				" is already used by the include of " + prev.Path})
			continue
		}
		if i, ok := ld.onStack[id]; ok {
			var chain []string
			for _, t := range ld.stack[i:] {
				chain = append(chain, t.Path)
			}
			chain = append(chain, target)
			msg := "include cycle: " + strings.Join(chain, " -> ")
			if first := ld.stack[i].Path; target != first {
				msg += " (the same file as " + first + ")"
			}
			ld.errs = append(ld.errs, &Error{Pos: inc.Pos, Msg: msg})
			continue
		}
		g, ok := ld.files[id]
		if !ok {
			g = ld.load(target, id, data)
		}
		inc.File = g
		f.IncludeMap[inc.Name] = g
	}
	return f
}

// includeError says an include could not be read.
type includeError struct {
	msg   string
	cause error
}

func (e *includeError) Error() string { return e.msg }
func (e *includeError) Unwrap() error { return e.cause }

// find locates an include: relative to the including file's directory, then
// in each include directory. It returns the cleaned path, the file's
// identity and the contents (nil if the file was loaded before).
func (ld *loader) find(from, inc string) (string, string, []byte, error) {
	var candidates []string
	if filepath.IsAbs(inc) {
		candidates = []string{filepath.Clean(inc)}
	} else {
		candidates = append(candidates, filepath.Join(filepath.Dir(from), inc))
		for _, d := range ld.opts.IncludeDirs {
			candidates = append(candidates, filepath.Join(d, inc))
		}
	}
	for _, c := range candidates {
		id := ld.identity(c)
		if _, ok := ld.files[id]; ok {
			return c, id, nil, nil
		}
		if ld.osFS {
			if kind := specialFile(c); kind != "" {
				return "", "", nil, &includeError{msg: "cannot read include " + strconv.Quote(inc) + ": " + c + " is a " + kind + ", not a regular file"}
			}
		}
		data, err := ld.read(c)
		if err == nil {
			return c, id, data, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", nil, &includeError{msg: "cannot read include " + strconv.Quote(inc) + ": " + err.Error(), cause: err}
		}
	}
	return "", "", nil, &includeError{msg: "include file " + strconv.Quote(inc) + " not found (looked in " +
		strings.Join(candidates, ", ") + ")", cause: fs.ErrNotExist}
}

// specialFile says what p is if it is a device, named pipe, socket or other
// irregular file, which an include must not name; it returns "" for a
// regular file, a directory (reading it fails with a clear error) and a
// path that cannot be examined (reading it says why).
func specialFile(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	switch m := fi.Mode(); {
	case m.IsRegular() || m.IsDir():
		return ""
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}
