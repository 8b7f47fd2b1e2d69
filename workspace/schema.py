"""OpenAPI descriptions for our authentication schemes (loaded by WorkspaceConfig.ready)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "workspace.authentication.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A workspace API key: `Authorization: Bearer lmk_...` (or the `X-Api-Key` header).",
        }
