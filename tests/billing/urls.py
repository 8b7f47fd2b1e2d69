"""The project's URLs plus one paid endpoint, to see billing's 402s as a client of a paid operation would."""

from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.services.orders import order_place
from lomote.urls import urlpatterns as project_urlpatterns


class PlaceOrderApi(APIView):
    """What a paid endpoint does with billing's answer: place the order and let its errors through."""

    def post(self, request, workspace_id):
        order = order_place(
            workspace_id=workspace_id,
            idempotency_key=request.data["key"],
            operation="image.generate",
            target={"prompt_hash": "abc"},
            amount=request.data["amount"],
            api_request=request.data["api"],
        )
        return Response({"order": order.pk}, status=201)


urlpatterns = [path("test/paid/<id:workspace_id>/", PlaceOrderApi.as_view(), name="test-paid"), *project_urlpatterns]
