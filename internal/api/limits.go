package api

// limitRoutes lists the rate-limit and dispatch-limit routes (issue 5).
func (a *API) limitRoutes() []Route { return nil }
