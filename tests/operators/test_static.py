"""Static files go out by content hash, gzipped and cached for a year; /favicon.ico is an icon."""

from __future__ import annotations

import re

import pytest
from django.templatetags.static import static

pytestmark = pytest.mark.django_db

HASHED = re.compile(r"\.[0-9a-f]{12}\.(js|css|svg)$")


@pytest.mark.parametrize(
    "name",
    [
        "dashboard/plotly.min.js",
        "drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js",
        "hami_sim/favicon.svg",
    ],
)
def test_static_file_is_hashed_gzipped_and_immutable(client, name):
    url = static(name)
    assert HASHED.search(url), url
    response = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200
    assert "immutable" in response["Cache-Control"]
    if name.endswith(".js"):  # a tiny icon is not worth compressing; scripts are
        assert response["Content-Encoding"] == "gzip"
    b"".join(response.streaming_content)
    response.close()


def test_plotly_sent_compressed_to_a_third_or_less(client):
    response = client.get(static("dashboard/plotly.min.js"), HTTP_ACCEPT_ENCODING="gzip")
    plain = client.get(static("dashboard/plotly.min.js"))
    assert int(response["Content-Length"]) * 3 < int(plain["Content-Length"])
    for r in (response, plain):
        b"".join(r.streaming_content)
        r.close()


def test_favicon_is_not_404(client):
    response = client.get("/favicon.ico", follow=True)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("image/svg+xml")
    b"".join(response.streaming_content)
    response.close()
