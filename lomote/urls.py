from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from lomote import views

urlpatterns = [
    path("", views.studio, name="studio"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),  # set_language: the top bar's language setting
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/v1/", include("workspace.urls")),
    path("api/v1/", include("agents.urls")),
    path("api/v1/", include("memory.urls")),
    path("api/v1/", include("billing.urls")),
    # Unknown API paths answer the JSON error body even with DEBUG on.
    re_path(r"^api/", views.api_not_found),
]

handler404 = "lomote.views.handler404"
handler500 = "lomote.views.handler500"
