package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
)

// compareMetrics are the columns of the -compare table.
var compareMetrics = []struct {
	name string
	get  func(*result) *float64
}{
	{"qps", func(r *result) *float64 { return &r.QPS }},
	{"p99_us", func(r *result) *float64 { return &r.P99US }},
	{"server_cpu_us_per_req", func(r *result) *float64 { return r.ServerCPUUSPerReq }},
	{"syscalls_per_req", func(r *result) *float64 { return r.SyscallsPerReq }},
}

// compare reads result JSON objects, one a line (other lines are skipped),
// and prints the median of each metric per implementation and the ratios of
// base to each other implementation. All results must come from the same
// configuration (size, conns, pipeline, rate).
func compare(in io.Reader, out io.Writer, base string) error {
	var order []string
	runs := map[string][]*result{}
	var config string
	s := bufio.NewScanner(in)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		r := new(result)
		if err := json.Unmarshal([]byte(line), r); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if r.Impl == "" {
			return fmt.Errorf("line %d: no impl", n)
		}
		c := fmt.Sprintf("size=%d conns=%d pipeline=%d rate=%g", r.Size, r.Conns, r.Pipeline, r.Rate)
		if config == "" {
			config = c
		} else if c != config {
			return fmt.Errorf("line %d: results of different configurations (%s and %s)", n, config, c)
		}
		if _, seen := runs[r.Impl]; !seen {
			order = append(order, r.Impl)
		}
		runs[r.Impl] = append(runs[r.Impl], r)
	}
	if err := s.Err(); err != nil {
		return err
	}
	if len(order) == 0 {
		return fmt.Errorf("no results on input")
	}

	medians := map[string][]*float64{}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(out, "medians (%s)\n", config)
	fmt.Fprint(tw, "impl\truns\t")
	for _, m := range compareMetrics {
		fmt.Fprintf(tw, "%s\t", m.name)
	}
	fmt.Fprint(tw, "errors\t\n")
	for _, impl := range order {
		rs := runs[impl]
		var errs uint64
		for _, r := range rs {
			errs += r.Errors
		}
		fmt.Fprintf(tw, "%s\t%d\t", impl, len(rs))
		for _, m := range compareMetrics {
			med := median(rs, m.get)
			medians[impl] = append(medians[impl], med)
			fmt.Fprintf(tw, "%s\t", fmtOpt(med))
		}
		fmt.Fprintf(tw, "%d\t\n", errs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A paced run that did not reach its offered rate ran with a backlog,
	// doing more per syscall: its CPU, syscalls and latency per request are
	// not at the load the others had.
	for _, impl := range order {
		short := 0
		for _, r := range runs[impl] {
			if r.Rate > 0 && r.QPS < 0.97*r.Rate {
				short++
			}
		}
		if short > 0 {
			fmt.Fprintf(out, "note: %d of %d runs of %s did not reach the offered rate (qps < 97%% of -rate): not an equal-load comparison\n", short, len(runs[impl]), impl)
		}
	}

	if _, ok := medians[base]; !ok {
		fmt.Fprintf(out, "no %s results, so no ratios\n", base)
		return nil
	}
	fmt.Fprintln(out, "ratios of medians")
	fmt.Fprint(tw, "ratio\t")
	for _, m := range compareMetrics {
		fmt.Fprintf(tw, "%s\t", m.name)
	}
	fmt.Fprint(tw, "\n")
	for _, impl := range order {
		if impl == base {
			continue
		}
		fmt.Fprintf(tw, "%s/%s\t", base, impl)
		for i := range compareMetrics {
			a, b := medians[base][i], medians[impl][i]
			if a == nil || b == nil || *b == 0 {
				fmt.Fprint(tw, "n/a\t")
				continue
			}
			fmt.Fprintf(tw, "%.3f\t", *a / *b)
		}
		fmt.Fprint(tw, "\n")
	}
	return tw.Flush()
}

// median of the non-null values of a metric; nil when there are none.
func median(rs []*result, get func(*result) *float64) *float64 {
	var vs []float64
	for _, r := range rs {
		if p := get(r); p != nil {
			vs = append(vs, *p)
		}
	}
	return harness.Median(vs)
}

func fmtOpt(p *float64) string {
	if p == nil {
		return "null"
	}
	if math.Abs(*p) >= 1000 {
		return fmt.Sprintf("%.0f", *p)
	}
	return fmt.Sprintf("%.4g", *p)
}
