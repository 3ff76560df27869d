//go:build !linux

package main

import (
	"errors"
	"os/exec"
	"syscall"
)

func startPinned(cmd *exec.Cmd, cpu int) error {
	if cpu < 0 {
		return cmd.Start()
	}
	return errors.New("pinning needs Linux; run with -pin=false")
}

func threads(pid, cpu int) ([]string, error) { return nil, errors.New("listing threads needs Linux") }

func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func allowedCPUs() int { return 0 }
