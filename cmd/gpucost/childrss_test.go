package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

var vmHWM = regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB`)

// runPeakRSS runs cmd to its end and returns its peak RSS in bytes: its VmHWM in
// /proc/<pid>/status, read every 2ms while it runs (getrusage's ru_maxrss would count the test
// process's own pages, which the child shares until it execs), and cmd.Wait's error.
func runPeakRSS(cmd *exec.Cmd) (int64, error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	peak := make(chan int64)
	go func() {
		var hwm int64
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		for {
			b, err := os.ReadFile(status)
			if err != nil {
				break
			}
			m := vmHWM.FindSubmatch(b)
			if m == nil {
				break // a zombie: the process has exited
			}
			kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
			hwm = max(hwm, kb<<10)
			time.Sleep(2 * time.Millisecond)
		}
		peak <- hwm
	}()
	err := cmd.Wait()
	return <-peak, err
}
