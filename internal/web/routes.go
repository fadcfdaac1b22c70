package web

// routes is the console's route table, one page group after another: the
// assets and public pages, login and workspaces, then the sections in
// navigation order. A new page group is a type in its own file whose
// routes method is listed here.
func (c *Console) routes() []Route {
	var all []Route
	for _, group := range [][]Route{
		staticRoutes(), publicPages{c}.routes(), trackingPages{c}.routes(), confirmPages{c}.routes(), preferencePages{c}.routes(), recipientPages{c}.routes(), inboxPages{c}.routes(), sessionPages{c}.routes(),
		overviewPages{c}.routes(), messagePages{c}.routes(), providerPages{c}.routes(), identityPages{c}.routes(),
		templatePages{c}.routes(), apiKeyPages{c}.routes(), memberPages{c}.routes(), limitPages{c}.routes(),
		webhookPages{c}.routes(), suppressionPages{c}.routes(), jobPages{c}.routes(),
		subscriberPages{c}.routes(), campaignPages{c}.routes(), workflowPages{c}.routes(), auditPages{c}.routes(),
	} {
		all = append(all, group...)
	}
	return all
}
