package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/openapi"
)

func TestFields(t *testing.T) {
	doc := []byte(`
components:
  schemas:
    A:
      type: object
      required: [a]
      properties: {a: {type: string}, b: {type: string}}
    B:
      allOf:
        - $ref: "#/components/schemas/A"
        - type: object
          required: [c]
          properties: {c: {type: integer}}
    C:
      oneOf:
        - {type: object, required: [s, x], properties: {s: {}, x: {}}}
        - {type: object, required: [s, y], properties: {s: {}, y: {}}}
        - {type: "null"}
    D:
      type: string
`)
	out, err := run(doc)
	require.NoError(t, err)
	var got struct{ Schemas map[string]fields }
	require.NoError(t, json.Unmarshal(out, &got))
	require.Equal(t, fields{Properties: []string{"a", "b"}, Required: []string{"a"}}, got.Schemas["A"])
	require.Equal(t, fields{Properties: []string{"a", "b", "c"}, Required: []string{"a", "c"}}, got.Schemas["B"])
	require.Equal(t, fields{Properties: []string{"s", "x", "y"}, Required: []string{"s"}}, got.Schemas["C"])
	require.Contains(t, string(out), `"D": {
      "properties": [],
      "required": []
    }`, "no fields is [], not null")

	_, err = run([]byte("components:\n  schemas:\n    A:\n      $ref: \"#/components/schemas/Nope\"\n"))
	require.ErrorContains(t, err, "unknown $ref")

	// The real document resolves, with the schemas the SDKs model.
	out, err = run(openapi.OpenAPI)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(out, &got))
	require.Contains(t, got.Schemas["SendRequest"].Properties, "idempotencyKey")
	require.Contains(t, got.Schemas["RecipientBulkItem"].Required, "externalId")
}
