// The hand-written models (src/models.ts) against the OpenAPI document:
// each interface's `@schema` tag names its schema; every field it declares
// must exist there, and every field the schema requires must be declared.
// The webhook event models (`@event`) are checked against the body of a
// delivery in the golden vectors.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import ts from "typescript";

import { openapiFields, packageDir, readJSON, skipOrFail } from "./helpers.js";

interface Model {
  name: string;
  tag: "schema" | "event";
  target: string;
  fields: string[];
}

/** The exported interfaces of src/models.ts with their tag and fields (bases within the file included). */
function models(): Model[] {
  const file = join(packageDir, "src", "models.ts");
  const src = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const decls = new Map<string, ts.InterfaceDeclaration>();
  src.forEachChild((n) => {
    if (ts.isInterfaceDeclaration(n)) {
      decls.set(n.name.text, n);
    }
  });
  const fieldsOf = (d: ts.InterfaceDeclaration): string[] => {
    const own = d.members.filter(ts.isPropertySignature).map((m) => m.name.getText(src));
    const bases = (d.heritageClauses ?? []).flatMap((h) =>
      h.types.map((t) => {
        const base = decls.get(t.expression.getText(src));
        assert.ok(base, `${d.name.text} extends ${t.expression.getText(src)}, not an interface of models.ts`);
        return fieldsOf(base);
      }),
    );
    return [...own, ...bases.flat()];
  };
  return [...decls.values()].map((d) => {
    const tags = ts.getJSDocTags(d).filter((t) => t.tagName.text === "schema" || t.tagName.text === "event");
    assert.equal(tags.length, 1, `interface ${d.name.text} needs one @schema or @event tag`);
    const comment = typeof tags[0].comment === "string" ? tags[0].comment.trim() : "";
    return { name: d.name.text, tag: tags[0].tagName.text as "schema" | "event", target: comment, fields: fieldsOf(d) };
  });
}

test("every model's fields exist in its OpenAPI schema, and its required fields are modelled", (t) => {
  const { schemas, reason } = openapiFields();
  if (!schemas) {
    skipOrFail(t, reason ?? "no OpenAPI field list");
    return;
  }
  const checked = models().filter((m) => m.tag === "schema");
  assert.ok(checked.length >= 25, `only ${checked.length} models`);
  // The union members of one schema (OtpVerified, OtpVerifyFailed) together
  // cover its required fields; each alone is checked for unknown fields.
  const covered = new Map<string, Set<string>>();
  for (const m of checked) {
    const s = schemas[m.target];
    assert.ok(s, `${m.name}: no schema ${m.target} in the OpenAPI document`);
    for (const f of m.fields) {
      assert.ok(s.properties.includes(f), `${m.name}.${f}: not a property of schema ${m.target} (${s.properties.join(", ")})`);
    }
    const seen = covered.get(m.target) ?? new Set<string>();
    m.fields.forEach((f) => seen.add(f));
    covered.set(m.target, seen);
  }
  for (const [target, seen] of covered) {
    for (const f of schemas[target].required) {
      assert.ok(seen.has(f), `schema ${target} requires ${f}, which no model of it declares`);
    }
  }
});

test("the webhook event models match a delivery's body (golden vectors)", () => {
  const v = readJSON<{ webhooks: { sign: Array<{ body: string }> } }>("testdata/vectors.json");
  const body = JSON.parse(v.webhooks.sign[0].body) as { data: object };
  const byTarget = new Map(models().filter((m) => m.tag === "event").map((m) => [m.target, m.fields.sort()]));
  assert.deepEqual(byTarget.get("body"), Object.keys(body).sort());
  assert.deepEqual(byTarget.get("data"), Object.keys(body.data).sort());
});
