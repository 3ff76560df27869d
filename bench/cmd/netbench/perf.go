package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/petrel-rpc/petrel/bench/internal/proc"
)

// perfEvent is the tracepoint hit on entry to every syscall.
const perfEvent = "raw_syscalls:sys_enter"

// perfCounter counts the syscalls of one process with `perf stat`. perf
// starts with its counter disabled (-D -1) and is switched on and off through
// its control descriptors, so that the caller knows when it counted.
type perfCounter struct {
	cmd    *exec.Cmd
	ctl    *os.File // perf's control input: "enable" / "disable"
	ack    *os.File // perf's acknowledgements
	ackBuf *bufio.Reader
	out    bytes.Buffer // perf's stderr, where the counts go; read after Wait
	waited chan error
}

func startPerf(pid int) (*perfCounter, error) {
	path, err := exec.LookPath("perf")
	if err != nil {
		return nil, err
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		_ = ctlR.Close()
		_ = ctlW.Close()
		return nil, err
	}
	p := &perfCounter{ctl: ctlW, ack: ackR, ackBuf: bufio.NewReader(ackR), waited: make(chan error, 1)}
	p.cmd = exec.Command(path, "stat", "-x,", "-e", perfEvent, "-D", "-1", "--control", "fd:3,4", "-p", strconv.Itoa(pid))
	p.cmd.ExtraFiles = []*os.File{ctlR, ackW} // fds 3 and 4
	p.cmd.Stderr = &p.out
	p.cmd.SysProcAttr = proc.ChildAttr()
	err = p.cmd.Start()
	_ = ctlR.Close()
	_ = ackW.Close()
	if err != nil {
		_ = ctlW.Close()
		_ = ackR.Close()
		return nil, err
	}
	go func() { p.waited <- p.cmd.Wait() }()
	return p, nil
}

// command sends "enable" or "disable" and waits for perf's acknowledgement.
func (p *perfCounter) command(word string, timeout time.Duration) error {
	if _, err := p.ctl.WriteString(word + "\n"); err != nil {
		return fmt.Errorf("perf %s: %w", word, err)
	}
	if err := p.ack.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	line, err := p.ackBuf.ReadString('\n')
	if err != nil {
		return fmt.Errorf("perf %s: no acknowledgement: %w", word, err)
	}
	// perf writes "ack\n" with its C string terminator: a NUL may
	// lead the next line.
	if strings.Trim(line, "\x00\n ") != "ack" {
		return fmt.Errorf("perf %s: acknowledged with %q", word, line)
	}
	return nil
}

// stop ends perf and returns the number of syscalls counted while enabled.
func (p *perfCounter) stop() (uint64, error) {
	defer p.ctl.Close()
	defer p.ack.Close()
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-p.waited:
	case <-t.C:
		p.kill()
		<-p.waited
		return 0, errors.New("perf did not stop on SIGINT")
	}
	return parsePerf(p.out.String())
}

func (p *perfCounter) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// parsePerf finds the count of perfEvent in `perf stat -x,` output, whose
// lines are "value,unit,event,run-time,percent,...".
func parsePerf(out string) (uint64, error) {
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Split(line, ",")
		if len(f) < 3 || f[2] != perfEvent {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("perf counted %q", f[0])
		}
		return n, nil
	}
	return 0, fmt.Errorf("no %s count in perf output %q", perfEvent, strings.TrimSpace(out))
}
