package capacity

import "time"

// SetRetryDelay sets the recorder's first retry delay for one test.
func SetRetryDelay(d time.Duration) (restore func()) {
	old := retryDelay
	retryDelay = d
	return func() { retryDelay = old }
}

// ReadAttempts is how many times the recorder tries one of its own reads.
var ReadAttempts = readAttempts
