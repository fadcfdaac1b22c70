package accounts

// LoginCounterKeys are the client and account counter keys of a login
// attempt, for tests that read the counters.
func LoginCounterKeys(email, client string) (clientKey, accountKey string) {
	k := newLoginKeys(email, client)
	return k.client, k.account
}

// SetPasswordCheck replaces the password check of logins, for tests that
// watch how many run at once.
func (s *Service) SetPasswordCheck(f func(hash, pw string) bool) { s.logins.check = f }
