//go:build !race

package limits_test

const raceBuild = false
