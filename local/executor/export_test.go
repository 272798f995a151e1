package executor

// ParseCounting is Parse, and how many fields its check of merged fields
// walked.
var ParseCounting = parse

// AWSScalars are the AppSync scalars whose input values are checked.
var AWSScalars = awsScalars
