package notify

// OTPTx holds the store verbs of one-time verification (issue 6).
type OTPTx interface{}
