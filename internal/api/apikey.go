package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/notify"
)

type apiKeyJSON struct {
	ID                   string   `json:"id"`
	KeyID                string   `json:"keyId"`
	Name                 string   `json:"name"`
	Scopes               []string `json:"scopes"`
	AllowedTemplateCodes []string `json:"allowedTemplateCodes"`
	Status               string   `json:"status"`
	CreatedAt            string   `json:"createdAt"`
	LastUsedAt           *string  `json:"lastUsedAt"`
	// Test: a test-mode key (issue 36), whose requests reach only the
	// built-in simulator.
	Test bool `json:"test"`
}

func apiKeyBody(k *notify.APIKey) apiKeyJSON {
	return apiKeyJSON{ID: k.ID, KeyID: k.KeyID, Name: k.Name, Scopes: k.Scopes, AllowedTemplateCodes: k.AllowedTemplateCodes,
		Status: k.Status, CreatedAt: Timestamp(k.CreatedAt), LastUsedAt: TimestampPtr(k.LastUsedAt), Test: k.Test}
}

type apiKeyIn struct {
	Name                 Optional[string]   `json:"name"`
	Scopes               Optional[[]string] `json:"scopes"`
	AllowedTemplateCodes Optional[[]string] `json:"allowedTemplateCodes"`
	Test                 Optional[bool]     `json:"test"`
}

func (in apiKeyIn) input(create bool) (accounts.APIKeyInput, error) {
	var out accounts.APIKeyInput
	if in.Test.Set {
		// A key's mode is fixed at create: its key id says it.
		if !create {
			return out, notify.Invalid("test cannot change: create a new key instead")
		}
		if in.Test.Null {
			return out, notify.Invalid("test must be a boolean")
		}
		out.Test = in.Test.Value
	}
	if in.Name.Set {
		if in.Name.Null {
			return out, notify.Invalid("name must be a string")
		}
		out.Name = &in.Name.Value
	}
	if in.Scopes.Set {
		if in.Scopes.Null {
			return out, notify.Invalid("scopes must be an array")
		}
		out.Scopes = &in.Scopes.Value
	}
	if in.AllowedTemplateCodes.Set {
		v := in.AllowedTemplateCodes.Value // null: every template allowed
		if !in.AllowedTemplateCodes.Null && v == nil {
			v = []string{}
		}
		out.AllowedTemplateCodes = &v
	}
	return out, nil
}

func (a accountsAPI) handleAPIKeyCreate(c *call) error {
	var in apiKeyIn
	if err := c.decode(&in); err != nil {
		return err
	}
	input, err := in.input(true)
	if err != nil {
		return err
	}
	k, err := a.room.CreateAPIKey(c.ctx, c.actor, input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"apiKey": apiKeyBody(k.Key), "key": k.Token, "hmacSecret": k.HMACSecret})
}

func (a accountsAPI) handleAPIKeyList(c *call) error {
	ks, err := a.room.ListAPIKeys(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]apiKeyJSON, len(ks))
	for i, k := range ks {
		out[i] = apiKeyBody(k)
	}
	return c.ok(http.StatusOK, map[string]any{"apiKeys": out})
}

func (a accountsAPI) handleAPIKeyUpdate(c *call) error {
	var in apiKeyIn
	if err := c.decode(&in); err != nil {
		return err
	}
	input, err := in.input(false)
	if err != nil {
		return err
	}
	k, err := a.room.UpdateAPIKey(c.ctx, c.actor, c.r.PathValue("id"), input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"apiKey": apiKeyBody(k)})
}

func (a accountsAPI) handleAPIKeyRotate(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	k, err := a.room.RotateAPIKey(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"apiKey": apiKeyBody(k.Key), "key": k.Token, "hmacSecret": k.HMACSecret})
}

func (a accountsAPI) handleAPIKeyStatus(action string) func(c *call) error {
	return func(c *call) error {
		if err := decodeNone(c.body); err != nil {
			return err
		}
		k, err := a.room.SetAPIKeyStatus(c.ctx, c.actor, c.r.PathValue("id"), action)
		if err != nil {
			return err
		}
		return c.ok(http.StatusOK, map[string]any{"apiKey": apiKeyBody(k)})
	}
}
