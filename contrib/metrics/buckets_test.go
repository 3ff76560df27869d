package metrics_test

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petrel-rpc/petrel/contrib/metrics"
)

// TestNewRefusesNaNBucket: a NaN bound compares false with every other, so
// it slipped past the increasing check; the histogram then exported a
// bucket le="NaN" and, from 35 bounds on (binary-searched), counted
// observations in the wrong buckets. New refuses it, naming the bound.
func TestNewRefusesNaNBucket(t *testing.T) {
	for _, b := range [][]float64{{0.1, math.NaN(), 1}, {math.NaN()}, {1, math.NaN()}} {
		_, err := metrics.New(metrics.Config{Registerer: prometheus.NewRegistry(), Buckets: b})
		if err == nil || !strings.Contains(err.Error(), "NaN") {
			t.Errorf("Buckets %v: %v, want an error naming the NaN bound", b, err)
		}
	}
}

// TestNewNamesUnorderedBucket: buckets out of order are refused with an
// error naming the two bounds and their places.
func TestNewNamesUnorderedBucket(t *testing.T) {
	_, err := metrics.New(metrics.Config{Registerer: prometheus.NewRegistry(), Buckets: []float64{0.1, 0.5, 0.25, 1}})
	if err == nil || !strings.Contains(err.Error(), "Buckets[2] (0.25)") || !strings.Contains(err.Error(), "Buckets[1] (0.5)") {
		t.Errorf("Buckets 0.1, 0.5, 0.25, 1: %v, want an error naming Buckets[2] (0.25) and Buckets[1] (0.5)", err)
	}
}
