// Package openapi embeds the OpenAPI description served at GET /openapi.yaml.
package openapi

import _ "embed"

// OpenAPI is openapi/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
