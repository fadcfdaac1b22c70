// Package api embeds the OpenAPI description served at GET /openapi.yaml.
package api

import _ "embed"

// OpenAPI is api/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
