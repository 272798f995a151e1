package eventjson

// The validating walkers, which the package's fuzz tests take as the
// reference for the walkers of valid JSON.
var (
	EachMember  = eachMember
	EachElement = eachElement
)
