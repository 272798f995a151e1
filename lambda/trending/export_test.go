package trending

// EncodeCells is encodeCells, for the cost test's flushes.
var EncodeCells = encodeCells
