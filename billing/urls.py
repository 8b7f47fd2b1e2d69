from django.urls import path

from billing import apis

PREFIX = "workspaces/<id:workspace_id>/billing/"

urlpatterns = [
    path(f"{PREFIX}balance/", apis.BalanceApi.as_view(), name="billing-balance"),
    path(f"{PREFIX}ledger/", apis.LedgerApi.as_view(), name="billing-ledger"),
    path(f"{PREFIX}quotes/", apis.QuoteListCreateApi.as_view(), name="billing-quotes"),
    path(f"{PREFIX}orders/", apis.OrderListApi.as_view(), name="billing-orders"),
    path(f"{PREFIX}approvals/", apis.ApprovalListCreateApi.as_view(), name="billing-approvals"),
    path(f"{PREFIX}topup/", apis.TopupApi.as_view(), name="billing-topup"),
    path(f"{PREFIX}policy/", apis.PolicyApi.as_view(), name="billing-policy"),
]
