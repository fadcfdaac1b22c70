package api

import "github.com/notifyd/notifyd/internal/notify"

// routes is the single route table: method, path, authentication, and the
// roles (dashboard) or scope (Notification API) each route requires.
func (a *API) routes() []Route {
	var all []Route
	for _, group := range [][]Route{a.coreRoutes(), verificationAPI{a, a.verification}.routes(), limitsAPI{a, a.limitRoom}.routes(),
		a.subscriberRoutes(), a.campaignRoutes(), webhooksAPI{a, a.webhooks}.routes(), suppressionsAPI{a, a.suppressions}.routes(), accountsAPI{a, a.accounts}.routes(),
		a.requestRoutes(), providersAPI{a, a.providers}.routes(), templatesAPI{a, a.templates}.routes(), identitiesAPI{a, a.identities}.routes(), a.optInRoutes()} {
		all = append(all, group...)
	}
	return all
}

// coreRoutes are the foundation, provider and send-pipeline routes.
func (a *API) coreRoutes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	send, read := notify.ScopeNotificationsSend, notify.ScopeNotificationsRead
	return []Route{
		// Notification API (HMAC-signed, enveloped).
		{Method: "POST", Path: "/v1/notifications", auth: authSigned, Scope: send, ownNonce: true, rateLimited: true, h: a.handleSend},
		{Method: "POST", Path: "/v1/notifications/bulk", auth: authSigned, Scope: send, ownNonce: true, rateLimited: true, h: a.handleSendBulk},
		{Method: "GET", Path: "/v1/notifications/{requestId}", auth: authSigned, Scope: read, rateLimited: true, h: a.handleRequestGet},
		{Method: "POST", Path: "/v1/notifications/{requestId}/cancel", auth: authSigned, Scope: send, rateLimited: true, h: a.handleRequestCancel},

		// Queue jobs, attempts, dead letters, metrics.
		{Method: "GET", Path: "/v1/jobs", auth: authDashboard, Roles: all, h: a.handleJobList},
		{Method: "POST", Path: "/v1/jobs/{id}/cancel", auth: authDashboard, Roles: op, h: a.handleJobCancel},
		{Method: "GET", Path: "/v1/attempts", auth: authDashboard, Roles: all, h: a.handleAttemptList},
		{Method: "GET", Path: "/v1/dead-letter", auth: authDashboard, Roles: admin, h: a.handleDeadLetterList},
		{Method: "POST", Path: "/v1/dead-letter/replay", auth: authDashboard, Roles: op, h: a.handleDeadLetterReplaySet},
		{Method: "POST", Path: "/v1/dead-letter/{jobId}/replay", auth: authDashboard, Roles: op, h: a.handleDeadLetterReplay},
		{Method: "GET", Path: "/v1/metrics", auth: authDashboard, Roles: all, h: a.handleMetrics},
	}
}
