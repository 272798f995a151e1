package executor

// ParseCounting is Parse, and how many fields its check of merged fields
// walked.
var ParseCounting = parse
