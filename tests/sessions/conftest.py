"""Helpers for the session and estimate tests: a JSON client bound to the sessions API."""

from __future__ import annotations

import orjson
import pytest

from tests.factories import gpu_node


class Api:
    """Thin JSON wrapper over Django's test client (real URL routing, middleware and views)."""

    def __init__(self, client) -> None:
        self.client = client

    def call(self, method: str, path: str, body: object = None, **headers):
        data = orjson.dumps(body) if body is not None else b""
        extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}
        response = getattr(self.client, method)(path, data, content_type="application/json", **extra)
        payload = orjson.loads(response.content) if response.content else None
        return response.status_code, payload

    def create(self, **body) -> dict:
        status, payload = self.call("post", "/api/v1/sessions", body)
        assert status == 201, payload
        return payload

    def place(
        self, sid: str, pod: dict, node_obj: dict | None = None, node_name: str | None = None, **headers
    ):
        body: dict = {"pod": pod}
        if node_obj is not None:
            body["node"] = node_obj
        if node_name is not None:
            body["nodeName"] = node_name
        return self.call("post", f"/api/v1/sessions/{sid}/placements", body, **headers)

    def get(self, sid: str) -> dict:
        status, payload = self.call("get", f"/api/v1/sessions/{sid}")
        assert status == 200, payload
        return payload


@pytest.fixture
def api(client) -> Api:
    return Api(client)


def a10_node(name: str = "tmpl-a10", cards: int = 2, labels: dict | None = None, **kw) -> dict:
    """A template node with ``cards`` NVIDIA A10s (23028 MiB, split 10), as a warm CA template."""
    return gpu_node(name, cards, labels=labels, **kw)


def chosen(placement: dict) -> list[str]:
    """The device uuids each container got, flattened."""
    return [dev["uuid"] for container in placement["containers"] for dev in container]
