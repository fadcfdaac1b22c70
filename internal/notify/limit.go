package notify

// LimitTx holds the store verbs of rate and dispatch limits (issue 5).
type LimitTx interface{}
