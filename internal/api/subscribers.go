package api

// subscriberRoutes are the routes of newsletter subscribers and the unsubscribe flow.
func (a *API) subscriberRoutes() []Route {
	return nil
}
