package api

import "github.com/notifyd/notifyd/internal/notify"

// Template handlers: placeholders until the templates use cases land.

func notImplemented() error {
	return notify.Errorf(notify.CodeInternal, "Not implemented yet")
}

func (a *API) handleTemplateCreate(c *call) error        { return notImplemented() }
func (a *API) handleTemplateList(c *call) error          { return notImplemented() }
func (a *API) handleTemplateGet(c *call) error           { return notImplemented() }
func (a *API) handleTemplateUpdate(c *call) error        { return notImplemented() }
func (a *API) handleTemplateVersionCreate(c *call) error { return notImplemented() }
func (a *API) handleTemplateVersionPublish(c *call) error {
	return notImplemented()
}
func (a *API) handleTemplateReviewStatus(c *call) error { return notImplemented() }
