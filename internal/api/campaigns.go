package api

// campaignRoutes are the routes of newsletter campaigns and their fan-out.
func (a *API) campaignRoutes() []Route {
	return nil
}
