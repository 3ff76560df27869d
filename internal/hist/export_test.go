package hist

// Internals for the black-box tests.
var (
	Index = histIndex
	Value = histValue
)

const (
	Sub     = histSub
	Buckets = histBuckets
)
