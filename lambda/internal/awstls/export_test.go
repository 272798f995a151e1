package awstls

import "github.com/aws/aws-sdk-go-v2/aws"

// Pending is how many connections cfg's client has opened ahead and not yet
// handed to a request.
func Pending(cfg aws.Config) int {
	c := cfg.HTTPClient.(*Client)
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}
