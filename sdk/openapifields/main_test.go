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
	// Inline objects by their dotted names.
	require.Equal(t, []string{"deduplicated", "recipientId", "runId"}, got.Schemas["triggerWorkflow.202.data.runs[]"].Required)
	require.Contains(t, got.Schemas["triggerWorkflow.request"].Properties, "cancellationKey")
	require.Contains(t, got.Schemas["WorkflowRun.steps[]"].Required, "requestId")
	require.Equal(t, []string{"recipientId", "topic"}, got.Schemas["subscribeToTopic.201"].Properties, "a components/responses $ref is followed")
}

func TestInlineFields(t *testing.T) {
	doc := []byte(`
paths:
  /x:
    parameters: [{name: p, in: query}]
    post:
      operationId: postX
      requestBody:
        content:
          application/json:
            schema: {type: object, required: [a], properties: {a: {type: string}}}
      responses:
        "200":
          $ref: "#/components/responses/XAnswer"
        "204":
          description: none
components:
  responses:
    XAnswer:
      content:
        application/json:
          schema:
            allOf:
              - $ref: "#/components/schemas/A"
              - properties:
                  data:
                    type: object
                    properties:
                      list: {type: array, items: {type: object, required: [i], properties: {i: {}}}}
                      refd: {$ref: "#/components/schemas/A"}
                      free: {type: object}
  schemas:
    A:
      type: object
      properties:
        nested: {type: [object, "null"], properties: {n: {}}}
`)
	out, err := run(doc)
	require.NoError(t, err)
	var got struct{ Schemas map[string]fields }
	require.NoError(t, json.Unmarshal(out, &got))
	require.Equal(t, fields{Properties: []string{"a"}, Required: []string{"a"}}, got.Schemas["postX.request"])
	require.Equal(t, []string{"data", "nested"}, got.Schemas["postX.200"].Properties)
	require.Equal(t, []string{"free", "list", "refd"}, got.Schemas["postX.200.data"].Properties)
	require.Equal(t, fields{Properties: []string{"i"}, Required: []string{"i"}}, got.Schemas["postX.200.data.list[]"])
	require.Equal(t, []string{"n"}, got.Schemas["A.nested"].Properties)
	for _, absent := range []string{"postX.204", "postX.200.data.refd", "postX.200.data.free", "postX.200.nested"} {
		require.NotContains(t, got.Schemas, absent)
	}
}
