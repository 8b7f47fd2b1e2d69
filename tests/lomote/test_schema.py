"""The OpenAPI schema validates without warnings, and the API docs work offline (no CDN)."""

from html.parser import HTMLParser

import pytest
import yaml
from django.core.management import call_command
from django.test import Client
from django.urls import reverse


class _AssetCollector(HTMLParser):
    """Every URL the page makes the browser fetch: script src, link href, img src."""

    def __init__(self):
        super().__init__()
        self.assets: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script" and attrs.get("src"):
            self.assets.append((tag, attrs["src"]))
        elif tag == "link" and attrs.get("href"):
            self.assets.append((tag, attrs["href"]))
        elif tag == "img" and attrs.get("src"):
            self.assets.append((tag, attrs["src"]))


def test_it_generates_a_valid_schema_without_warnings(tmp_path):
    # given the project's API
    target = tmp_path / "schema.yml"

    # when the schema is generated with validation, failing on any warning
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))

    # then it is an OpenAPI 3 document listing the v1 routes
    schema = yaml.safe_load(target.read_text())
    assert schema["openapi"].startswith("3.")
    assert "/api/v1/workspaces/{workspace_id}/events/" in schema["paths"]


@pytest.mark.django_db
def test_it_serves_the_openapi_schema():
    # when the schema URL is fetched (no credentials needed: it documents, it does not reveal data)
    response = Client().get(reverse("schema"))

    # then it is OpenAPI 3 with our error body and our authentication schemes
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi")
    schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "Lomote API"
    assert {"apiKey", "cookieAuth", "tokenAuth"} <= set(schema["components"]["securitySchemes"])
    assert set(schema["components"]["schemas"]["Error"]["properties"]) == {"error"}
    operation = schema["paths"]["/api/v1/workspaces/{workspace_id}/"]["get"]
    assert operation["responses"]["404"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")


@pytest.mark.django_db
def test_it_serves_the_docs_from_local_static_assets_only():
    # given the Swagger UI page
    client = Client()
    page = client.get(reverse("api-docs"))
    assert page.status_code == 200
    html = page.content.decode()
    collector = _AssetCollector()
    collector.feed(html)
    assets = [url for _, url in collector.assets]

    # then its scripts and styles all come from our own /static/, never a CDN
    assert {tag for tag, _ in collector.assets} >= {"script", "link"}
    assert assets and all(url.startswith("/static/") for url in assets), assets
    assert "//cdn" not in html and "unpkg.com" not in html and "jsdelivr" not in html
    # then each of them is actually served, with content
    for url in assets:
        asset = client.get(url)
        assert asset.status_code == 200, url
        assert b"".join(asset.streaming_content if asset.streaming else [asset.content]), url
