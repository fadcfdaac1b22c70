package api

// webhookRoutes are the routes of webhook endpoints, their deliveries and the event outbox.
func (a *API) webhookRoutes() []Route {
	return nil
}
