package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecretKeyPrevious: NOTIFYD_SECRET_KEY_PREVIOUS is a comma-separated
// list of keys (issue 17, key rotation), each checked like the secret key.
func TestSecretKeyPrevious(t *testing.T) {
	t.Parallel()
	other := strings.Repeat("cd", 32)
	c, _, err := load(t, nil, map[string]string{"NOTIFYD_SECRET_KEY": hexKey, "NOTIFYD_SECRET_KEY_PREVIOUS": " " + other + " , " + hexKey + ","}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{other, hexKey}, c.SecretKeyPrevious)
	_, _, err = load(t, nil, map[string]string{"NOTIFYD_SECRET_KEY_PREVIOUS_FILE": "/run/secrets/old"}, map[string]string{"/run/secrets/old": other + "\n"})
	require.NoError(t, err)
	_, _, err = load(t, nil, map[string]string{"NOTIFYD_SECRET_KEY_PREVIOUS": other + ",abc"}, nil)
	require.ErrorContains(t, err, "NOTIFYD_SECRET_KEY_PREVIOUS key 2 is invalid")
}
