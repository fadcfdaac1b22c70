package console_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsoleTemplateVersionDelete (issue 29, finding 3): every version
// but the newest has a delete button; the service's refusals (the newest,
// the one sends use) are shown on the page, and a version no send uses
// goes.
func TestConsoleTemplateVersionDelete(t *testing.T) {
	t.Parallel()
	f := setup(t)
	id := apiCreate(t, f.env.Owner, "/v1/templates", "template", map[string]string{"code": "c", "channel": "sms", "name": "T"})
	for i := 1; i <= 3; i++ {
		r, err := f.env.Owner.Dashboard(ctx, "POST", "/v1/templates/"+id+"/versions", map[string]string{"text": "text " + strconv.Itoa(i)})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, r.Status)
	}
	r, err := f.env.Owner.Dashboard(ctx, "POST", "/v1/templates/"+id+"/versions/2/publish", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status)

	c := f.env.ConsoleLogin(t, f.env.Email, f.env.Password)
	_, body := c.Get(t, "/templates/"+id)
	require.Contains(t, body, `id="delete-1"`)
	require.Contains(t, body, `id="delete-2"`)
	require.NotContains(t, body, `id="delete-3"`, "the newest version cannot be deleted")
	require.Contains(t, body, "text 3", "the new-version form starts from the newest version's text")

	resp, body := c.Post(t, "/templates/"+id+"/versions/2/delete", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "Version 2 is the published version sends use; publish a newer version first")
	resp, body = c.Post(t, "/templates/"+id+"/versions/3/delete", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "Version 3 is the newest version of this template and cannot be deleted")
	resp, _ = c.Post(t, "/templates/"+id+"/versions/x/delete", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	resp, _ = c.Post(t, "/templates/"+id+"/versions/1/delete", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/templates/"+id)
	require.Contains(t, body, "Version 1 deleted.")
	require.NotContains(t, body, `data-version="1"`)
	require.Contains(t, body, `data-version="2"`)
}
