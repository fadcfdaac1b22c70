// Shared by the tests: where the shared test data is, and the rule that
// NOTIFYD_REQUIRE_LIVE=1 (set by .ci/run) turns every skip into a failure.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** sdk/typescript (the tests run compiled, from dist-test/). */
export const packageDir = fileURLToPath(new URL("..", import.meta.url));
/** The repository's root. */
export const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));

export function readJSON<T>(pathFromSdk: string): T {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`../../${pathFromSdk}`, import.meta.url)), "utf8")) as T;
}

/** Skips with a one-line reason, or fails when NOTIFYD_REQUIRE_LIVE=1 says nothing may skip. */
export function skipOrFail(t: { skip(message?: string): void }, reason: string): void {
  if (process.env.NOTIFYD_REQUIRE_LIVE === "1") {
    throw new Error(`NOTIFYD_REQUIRE_LIVE=1 but ${reason}`);
  }
  t.skip(reason);
}

export interface SchemaFields {
  properties: string[];
  required: string[];
}

/**
 * The field names of every OpenAPI schema: from the file
 * NOTIFYD_OPENAPI_FIELDS names, else from `go run ./sdk/openapifields`
 * (which reads openapi/openapi.yaml); undefined with a reason when neither
 * is available.
 */
export function openapiFields(): { schemas?: Record<string, SchemaFields>; reason?: string } {
  const file = process.env.NOTIFYD_OPENAPI_FIELDS;
  try {
    const text = file
      ? readFileSync(file, "utf8")
      : execFileSync("go", ["run", "./sdk/openapifields"], { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return { schemas: (JSON.parse(text) as { schemas: Record<string, SchemaFields> }).schemas };
  } catch (err) {
    return { reason: `no OpenAPI field list (set NOTIFYD_OPENAPI_FIELDS or put go on PATH): ${String(err).split("\n")[0]}` };
  }
}
