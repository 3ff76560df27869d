//go:build !linux

package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

// StartPinned starts cmd; pinning (cpu >= 0) needs Linux.
func StartPinned(cmd *exec.Cmd, cpu int) error {
	if cpu < 0 {
		return cmd.Start()
	}
	return errors.New("pinning needs Linux; run with -pin=false")
}

// Threads needs Linux.
func Threads(pid, cpu int) ([]string, error) { return nil, errors.New("listing threads needs Linux") }

// ChildAttr puts a child in its own process group.
func ChildAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// AllowedCPUs is 0: unknown outside Linux.
func AllowedCPUs() int { return 0 }
