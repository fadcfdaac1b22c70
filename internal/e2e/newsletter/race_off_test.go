//go:build !race

package newsletter_test

const raceBuild = false
