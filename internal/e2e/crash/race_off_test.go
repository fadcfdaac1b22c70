//go:build !race

package crash_test

const raceBuild = false
