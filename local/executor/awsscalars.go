package executor

// AppSync's scalars as it documents them, checked on input before any
// resolver runs: a literal that is not one is a validation error, a
// variable's value a variable error. Each is a string of its form:
//
//   - AWSDateTime: an extended ISO 8601 date and time, YYYY-MM-DDThh:mm,
//     then :ss and .s to .sssssssss (1 to 9 digits) if given, then a time
//     zone offset, which is required: Z or ±hh:mm, with :ss allowed (a year
//     may be negative: -YYYY).
//   - AWSEmail: local-part@domain-part as RFC 822 defines an addr-spec,
//     each part atoms joined by dots (quoted strings and domain literals,
//     which RFC 822 also allows, are refused here: docs/local.md).
//
// The schema uses no other AWS scalar; one added passes as given until it
// is written here, and TestEveryAWSScalarIsChecked fails meanwhile.

import (
	"regexp"
	"strconv"
	"time"
)

// awsScalars check the values of AppSync's scalars the schema uses.
var awsScalars = map[string]func(string) bool{
	"AWSDateTime": isDateTime,
	"AWSEmail":    isEmail,
}

var dateTime = regexp.MustCompile(`^(-?\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2})(?::(\d{2}))?)$`)

func isDateTime(s string) bool {
	m := dateTime.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v } // "" is 0
	year, month, day := n(1), n(2), n(3)
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return false
	}
	return n(4) < 24 && n(5) < 60 && n(6) < 60 && n(7) < 24 && n(8) < 60 && n(9) < 60
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// atom is RFC 822's: printable ASCII but its specials ()<>@,;:\".[]
const atom = "[!#$%&'*+\\-/=?^_`{|}~0-9A-Za-z]+"

var email = regexp.MustCompile(`^` + atom + `(?:\.` + atom + `)*@` + atom + `(?:\.` + atom + `)*$`)

func isEmail(s string) bool { return email.MatchString(s) }
