// Package proc holds what the benchmark commands (cmd/netbench, cmd/rpcbench)
// need to run their children as measured processes on Linux: starting a
// child pinned to one CPU from its first instruction, checking that every
// thread of a process stays on its CPU, reading a process's CPU time from
// /proc/PID/stat, and keeping track of the children so that every exit path
// kills them.
package proc
