from rest_framework.throttling import SimpleRateThrottle

from workspace.authentication import ApiKeyPrincipal


class PrincipalRateThrottle(SimpleRateThrottle):
    """Rate limit per user, per API key, or per client address for anonymous requests."""

    scope = "principal"

    def get_cache_key(self, request, view):
        user = request.user
        if isinstance(user, ApiKeyPrincipal):
            ident = f"key:{user.api_key.pk}"
        elif user and user.is_authenticated:
            ident = f"user:{user.pk}"
        else:
            ident = f"addr:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
