package metrics

import "github.com/prometheus/client_golang/prometheus"

// fraudRules are the OTP fraud guard's rules (notify.FraudRule*): the
// label is bounded to them, anything else counts as "other".
var fraudRules = map[string]bool{"country": true, "prefix_velocity": true, "client_velocity": true, "daily_budget": true,
	"denied_prefix": true}

func newFraudRefused() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notifyd_otp_fraud_guard_refusals_total", Help: "OTP sends and resends refused by the OTP fraud guard, by rule.",
	}, []string{"rule"})
}

// OTPFraudRefused counts one OTP send refused by the fraud guard's rule.
func (l *Limits) OTPFraudRefused(rule string) {
	if l == nil {
		return
	}
	if !fraudRules[rule] {
		rule = "other"
	}
	l.OTPFraudRefusals.WithLabelValues(rule).Inc()
}
