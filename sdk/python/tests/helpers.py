"""Shared by the tests: where the shared test data is, and the rule that
NOTIFYD_REQUIRE_LIVE=1 (set by .ci/run) turns every skip into a failure."""

from __future__ import annotations

import json
import os
import subprocess
import unittest
from pathlib import Path
from typing import Any

SDK_DIR = Path(__file__).resolve().parents[2]  # sdk/
REPO_ROOT = SDK_DIR.parent


def read_json(path_from_sdk: str) -> Any:
    return json.loads((SDK_DIR / path_from_sdk).read_text(encoding="utf-8"))


def skip_or_fail(test: unittest.TestCase, reason: str) -> None:
    """Skips with a one-line reason, or fails when NOTIFYD_REQUIRE_LIVE=1 says nothing may skip."""
    if os.environ.get("NOTIFYD_REQUIRE_LIVE") == "1":
        test.fail(f"NOTIFYD_REQUIRE_LIVE=1 but {reason}")
    raise unittest.SkipTest(reason)


def openapi_fields() -> tuple[dict[str, dict[str, list[str]]] | None, str]:
    """The field names of every OpenAPI schema: from the file
    NOTIFYD_OPENAPI_FIELDS names, else from ``go run ./sdk/openapifields``
    (which reads openapi/openapi.yaml); None and a reason when neither is
    available."""
    path = os.environ.get("NOTIFYD_OPENAPI_FIELDS")
    try:
        if path:
            text = Path(path).read_text(encoding="utf-8")
        else:
            text = subprocess.run(["go", "run", "./sdk/openapifields"], cwd=REPO_ROOT, check=True,
                                  capture_output=True, text=True).stdout
        return json.loads(text)["schemas"], ""
    except (OSError, subprocess.CalledProcessError, ValueError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        return None, f"no OpenAPI field list (set NOTIFYD_OPENAPI_FIELDS or put go on PATH): {first}"
