"""The hand-written models (notifyd/models.py) against the OpenAPI
document: every key a model declares must exist in its schema, and every
key the schema requires must be declared. The webhook event models are
checked against the body of a delivery in the golden vectors."""

from __future__ import annotations

import json
import typing
import unittest

from notifyd import models

from .helpers import openapi_fields, read_json, skip_or_fail


def _typeddicts() -> list[type]:
    return [v for v in vars(models).values() if typing.is_typeddict(v)]


class Models(unittest.TestCase):
    def test_every_model_is_registered(self) -> None:
        registered = set(models.SCHEMAS) | set(models.EVENTS) | set(models.SDK_ONLY)
        for td in _typeddicts():
            self.assertIn(td, registered, f"{td.__name__}: add it to SCHEMAS, EVENTS or SDK_ONLY")

    def test_against_openapi(self) -> None:
        schemas, reason = openapi_fields()
        if schemas is None:
            skip_or_fail(self, reason)
            return
        self.assertGreaterEqual(len(models.SCHEMAS), 25)
        for model, target in models.SCHEMAS.items():
            with self.subTest(model.__name__):
                self.assertIn(target, schemas, f"{model.__name__}: no schema {target} in the OpenAPI document")
                s = schemas[target]
                for field in model.__annotations__:
                    self.assertIn(field, s["properties"], f"{model.__name__}.{field}: not a property of {target}")
                for field in s["required"]:
                    self.assertIn(field, model.__annotations__, f"schema {target} requires {field}")

    def test_webhook_event_models(self) -> None:
        body = json.loads(read_json("testdata/vectors.json")["webhooks"]["sign"][0]["body"])
        self.assertEqual(sorted(models.WebhookEvent.__annotations__), sorted(body))
        self.assertEqual(sorted(models.WebhookEventData.__annotations__), sorted(body["data"]))


if __name__ == "__main__":
    unittest.main()
