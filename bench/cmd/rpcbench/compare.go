package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/petrel-rpc/petrel/bench/internal/harness"
)

// A target is one comparison the RPC issue asks for: the ratio of two
// implementations' medians of one metric, with the bound it should meet.
type target struct {
	num, den string // implementations
	metric   string // a result key
	atMost   bool   // the ratio should be <= bound (else >= bound)
	bound    float64
	paced    bool // measured in the paced runs (-rate), else in the closed loop
}

var targets = []target{
	{num: "petrel", den: "grpc", metric: "qps", bound: 2.5},
	{num: "petrel", den: "apache", metric: "qps", bound: 2},
	{num: "petrel", den: "grpc", metric: "p99_us", atMost: true, bound: 0.5},
	{num: "petrel-mux", den: "petrel", metric: "qps", bound: 1.2},
	{num: "petrel", den: "grpc", metric: "server_cpu_us_per_req", atMost: true, bound: 0.5, paced: true},
}

// medianMetrics are the columns of the table, in order.
var medianMetrics = []string{"qps", "avg_us", "p50_us", "p99_us", "p999_us", "server_cpu_us_per_req", "client_cpu_us_per_req"}

// compare reads result JSON objects, one a line (other lines are skipped),
// and prints per implementation the number of runs, the medians of the
// metrics and the sum of errors, then the target ratios of the medians that
// apply to these runs (closed loop or paced: runs with -rate > 0). All
// results must come from the same configuration (size, conc, rate).
func compare(in io.Reader, out io.Writer) error {
	runs := map[string][]map[string]any{}
	var order []string
	paced := false
	var config string // of the first result; every other must match it
	s := bufio.NewScanner(in)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; s.Scan(); n++ {
		var m map[string]any
		if json.Unmarshal(s.Bytes(), &m) != nil {
			continue
		}
		impl, ok := m["impl"].(string)
		if !ok {
			continue
		}
		c := fmt.Sprintf("size=%v conc=%v rate=%v", m["size"], m["conc"], m["rate"])
		if config == "" {
			config = c
		} else if c != config {
			return fmt.Errorf("line %d: results of different configurations (%s and %s)", n, config, c)
		}
		if r, _ := m["rate"].(float64); r > 0 {
			paced = true
		}
		if _, seen := runs[impl]; !seen {
			order = append(order, impl)
		}
		runs[impl] = append(runs[impl], m)
	}
	if err := s.Err(); err != nil {
		return err
	}
	if len(runs) == 0 {
		return errors.New("no result lines on the input")
	}
	medians := map[string]map[string]*float64{}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "impl\truns\t")
	for _, k := range medianMetrics {
		fmt.Fprintf(tw, "%s\t", k)
	}
	fmt.Fprint(tw, "errors\t\n")
	for _, impl := range order {
		rs := runs[impl]
		medians[impl] = map[string]*float64{}
		fmt.Fprintf(tw, "%s\t%d\t", impl, len(rs))
		for _, k := range medianMetrics {
			var vals []float64
			for _, r := range rs {
				if v, ok := r[k].(float64); ok {
					vals = append(vals, v)
				}
			}
			med := harness.Median(vals)
			medians[impl][k] = med
			fmt.Fprintf(tw, "%s\t", fmtOpt(med))
		}
		var errs float64
		for _, r := range rs {
			e, _ := r["errors"].(float64)
			errs += e
		}
		fmt.Fprintf(tw, "%g\t\n", errs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A paced run that did not reach its offered rate ran with a backlog:
	// its latency and CPU figures are not at the load the others had.
	for _, impl := range order {
		short := 0
		for _, r := range runs[impl] {
			rate, _ := r["rate"].(float64)
			qps, _ := r["qps"].(float64)
			if rate > 0 && qps < 0.97*rate {
				short++
			}
		}
		if short > 0 {
			fmt.Fprintf(out, "note: %d of %d runs of %s did not reach the offered rate (qps < 97%% of -rate): not an equal-load comparison\n", short, len(runs[impl]), impl)
		}
	}
	mode := "closed loop"
	if paced {
		mode = "paced (-rate)"
	}
	fmt.Fprintf(out, "\nratios of medians, %s runs:\n", mode)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, t := range targets {
		if t.paced != paced {
			continue
		}
		op := ">="
		if t.atMost {
			op = "<="
		}
		name := fmt.Sprintf("%s %s / %s %s", t.num, t.metric, t.den, t.metric)
		a, b := medians[t.num][t.metric], medians[t.den][t.metric]
		if a == nil || b == nil || *b == 0 {
			fmt.Fprintf(tw, "%s\tn/a\t(target %s %g)\t\n", name, op, t.bound)
			continue
		}
		r := *a / *b
		verdict := "met"
		if (t.atMost && r > t.bound) || (!t.atMost && r < t.bound) {
			verdict = "MISSED"
		}
		fmt.Fprintf(tw, "%s\t%.3f\t(target %s %g)\t%s\n", name, r, op, t.bound, verdict)
	}
	return tw.Flush()
}

func fmtOpt(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'g', 6, 64)
}
