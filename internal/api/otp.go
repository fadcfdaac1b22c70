package api

// otpRoutes lists the OTP routes (issue 6).
func (a *API) otpRoutes() []Route { return nil }
