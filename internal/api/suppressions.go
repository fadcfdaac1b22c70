package api

// suppressionRoutes are the routes of the email suppression list and bounce/complaint intake.
func (a *API) suppressionRoutes() []Route {
	return nil
}
