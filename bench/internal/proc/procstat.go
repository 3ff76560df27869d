package proc

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// CPUTime returns the user plus system CPU time of every thread of process
// pid so far: fields 14 (utime) and 15 (stime) of /proc/PID/stat, in clock
// ticks.
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	utime, err1 := strconv.ParseUint(f[14-3], 10, 64)
	stime, err2 := strconv.ParseUint(f[15-3], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime %q or stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / time.Duration(ClockTicks()), nil
}

// ClockTicks is sysconf(_SC_CLK_TCK), which the kernel passes to every
// process in its auxiliary vector as AT_CLKTCK (read here as the 64-bit
// entries of 64-bit platforms); 100 if that cannot be read.
func ClockTicks() uint64 {
	const atClkTck = 17
	b, err := os.ReadFile("/proc/self/auxv")
	if err != nil {
		return 100
	}
	for ; len(b) >= 16; b = b[16:] {
		if binary.NativeEndian.Uint64(b) == atClkTck {
			if v := binary.NativeEndian.Uint64(b[8:]); v > 0 {
				return v
			}
		}
	}
	return 100
}
