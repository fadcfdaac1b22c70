package otp

import "time"

// Policy holds the OTP limits. SPEC fixes them globally for v1 ("OTP
// defaults"; no per-workspace customization), but keeping them in a value
// lets tests shorten them and keeps the numbers in one place.
type Policy struct {
	CodeLength     int           // digits in a code
	CodeTTL        time.Duration // life of a code or link, restarted by resend
	MaxAttempts    int           // verification attempts per code
	ResendCooldown time.Duration // minimum gap between sends of one session
	MaxResends     int           // resends per session
	SendsPerHour   int           // sends (and resends) per workspace and recipient per UTC hour
	SendsPerDay    int           // sends (and resends) per workspace and recipient per UTC day
	TokenTTL       time.Duration // life of a verification token
}

// DefaultPolicy returns SPEC's OTP defaults: 6 digits, 180 s, 5 attempts,
// 30 s cooldown, 3 resends, 5 per hour, 10 per day, 300 s token.
func DefaultPolicy() Policy {
	return Policy{
		CodeLength:     6,
		CodeTTL:        180 * time.Second,
		MaxAttempts:    5,
		ResendCooldown: 30 * time.Second,
		MaxResends:     3,
		SendsPerHour:   5,
		SendsPerDay:    10,
		TokenTTL:       300 * time.Second,
	}
}

// HourWindow returns the UTC clock hour holding t, [start, end), because
// SPEC resets the hourly send counter at the next UTC hour.
func HourWindow(t time.Time) (start, end time.Time) {
	u := t.UTC()
	start = time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), 0, 0, 0, time.UTC)
	return start, start.Add(time.Hour)
}

// DayWindow returns the UTC day holding t, [start, end), because SPEC
// resets the daily send counter at UTC midnight.
func DayWindow(t time.Time) (start, end time.Time) {
	u := t.UTC()
	start = time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}
