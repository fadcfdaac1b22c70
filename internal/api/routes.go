package api

// routes is the single route table: method, path, authentication, and the
// roles (dashboard) or scope (Notification API) each route requires. Each
// room's handlers list their own routes; this is the list of rooms.
func (a *API) routes() []Route {
	r := a.rooms
	var all []Route
	for _, group := range [][]Route{
		sendsAPI{a, r.Sends}.routes(),
		verificationAPI{a, r.Verification}.routes(),
		limitsAPI{a, r.Limits}.routes(),
		newsletterAPI{a, r.Newsletter}.routes(),
		webhooksAPI{a, r.Webhooks}.routes(),
		suppressionsAPI{a, r.Suppressions}.routes(),
		accountsAPI{a, r.Accounts}.routes(),
		providersAPI{a, r.Providers}.routes(),
		templatesAPI{a, r.Templates}.routes(),
		identitiesAPI{a, r.Identities}.routes(),
		recipientsAPI{a, r.Recipients}.routes(),
		consentsAPI{a, r.Recipients}.routes(),
		categoriesAPI{a, r.Categories}.routes(),
		windowsAPI{a, r.Windows}.routes(),
		inboundHooksAPI{a, r.InboundHooks}.routes(),
		inboxAPI{a, r.Inbox}.routes(),
		workflowsAPI{a, r.Workflows}.routes(),
		engagementAPI{a, r.Engagement}.routes(),
	} {
		all = append(all, group...)
	}
	return all
}
