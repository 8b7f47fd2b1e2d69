"""REST API v1 for billing, under /workspaces/<workspace_id>/billing/. Views parse, call a service, serialize.

Members read; editors ask for quotes and approve spending (people only, never API keys); owners top up
and change the spend policy. Outsiders get 404 before anything else.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from billing import selectors, serializers
from billing.models import OrderStatus
from billing.services.approvals import approval_grant
from billing.services.policy import spend_policy_update
from billing.services.quotes import quote_create
from billing.services.wallets import wallet_topup
from lomote.kernel.serializers import error_responses, validated
from workspace.apis import IDEMPOTENCY_KEY, WorkspaceApi
from workspace.models import Role


def _balance(workspace_id: int) -> dict:
    return serializers.BalanceOut(selectors.balance_get(workspace_id=workspace_id)).data


class BalanceApi(WorkspaceApi):
    serializer_class = serializers.BalanceOut

    @extend_schema(
        operation_id="billing_balance",
        description="The wallet (available and held credits), today's spending and the spend policy.",
        responses={200: serializers.BalanceOut, **error_responses(404)},
    )
    def get(self, request, workspace_id):
        return Response(_balance(self.access().workspace.pk))


class LedgerApi(WorkspaceApi):
    serializer_class = serializers.LedgerEntryOut

    @extend_schema(
        operation_id="billing_ledger",
        description="Every money movement, newest first. The balance is the sum of this ledger.",
        responses={200: serializers.LedgerEntryOut(many=True), **error_responses(404)},
    )
    def get(self, request, workspace_id):
        page = self.paginate_queryset(selectors.ledger_list(workspace_id=self.access().workspace.pk))
        return self.get_paginated_response(serializers.LedgerEntryOut(page, many=True).data)


class QuoteListCreateApi(WorkspaceApi):
    serializer_class = serializers.QuoteOut

    @extend_schema(
        operation_id="billing_quotes_list",
        description="The workspace's quotes, newest first. `status=open` lists those still waiting for a decision.",
        parameters=[OpenApiParameter("status", str, enum=selectors.QUOTE_STATUSES, description="Only these.")],
        responses={200: serializers.QuoteOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.QuoteQueryIn, request.query_params.dict())
        quotes = selectors.quote_list(workspace_id=access.workspace.pk, status=query.get("status"))
        page = self.paginate_queryset(quotes)
        return self.get_paginated_response(serializers.QuoteOut(page, many=True).data)

    @extend_schema(
        operation_id="billing_quotes_create",
        description="Price an operation. The quote can be approved (POST approvals) until it expires.",
        request=serializers.QuoteIn,
        responses={201: serializers.QuoteOut, **error_responses(400, 403, 404)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.QuoteIn, request.data)
        quote = quote_create(
            workspace_id=access.workspace.pk,
            operation=data["operation"],
            params=data["params"],
            task_id=data.get("task"),
            created_by=access.user,
        )
        return Response(serializers.QuoteOut(quote).data, status=status.HTTP_201_CREATED)


class OrderListApi(WorkspaceApi):
    serializer_class = serializers.OrderOut

    @extend_schema(
        operation_id="billing_orders_list",
        description="The workspace's paid operations, newest first. `status=held` lists the holds: credits "
        "reserved for work under way, captured when it succeeds or released when it fails.",
        parameters=[
            OpenApiParameter("status", str, enum=OrderStatus.values, description="Only orders in this status."),
            OpenApiParameter("task", int, description="Only this task's orders."),
        ],
        responses={200: serializers.OrderOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.OrderQueryIn, request.query_params.dict())
        orders = selectors.order_list(
            workspace_id=access.workspace.pk, task_id=query.get("task"), status=query.get("status")
        )
        page = self.paginate_queryset(orders)
        return self.get_paginated_response(serializers.OrderOut(page, many=True).data)


class ApprovalListCreateApi(WorkspaceApi):
    serializer_class = serializers.ApprovalOut

    @extend_schema(
        operation_id="billing_approvals_list",
        parameters=[OpenApiParameter("task", int, description="Only this task's approvals.")],
        responses={200: serializers.ApprovalOut(many=True), **error_responses(400, 404)},
    )
    def get(self, request, workspace_id):
        access = self.access()
        query = validated(serializers.ApprovalQueryIn, request.query_params.dict())
        approvals = selectors.approval_list(workspace_id=access.workspace.pk, task_id=query.get("task"))
        page = self.paginate_queryset(approvals)
        return self.get_paginated_response(serializers.ApprovalOut(page, many=True).data)

    @extend_schema(
        operation_id="billing_approvals_create",
        description=(
            "Approve spending: one quote (`quote`), or a budget for a task (`task` and `budget`). Editors and "
            "owners, as themselves: API keys cannot approve (403 `person_required`)."
        ),
        request=serializers.ApprovalIn,
        responses={201: serializers.ApprovalOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.EDITOR)
        data = validated(serializers.ApprovalIn, request.data)
        approval = approval_grant(
            access=access, quote_id=data.get("quote"), task_id=data.get("task"), budget=data.get("budget")
        )
        return Response(serializers.ApprovalOut(approval).data, status=status.HTTP_201_CREATED)


class TopupApi(WorkspaceApi):
    serializer_class = serializers.BalanceOut

    @extend_schema(
        operation_id="billing_topup",
        description="Add credits to the wallet. Owners only. A repeat with the same `Idempotency-Key` adds nothing "
        "and answers the balance the first request answered.",
        parameters=[IDEMPOTENCY_KEY],
        request=serializers.TopupIn,
        responses={200: serializers.BalanceOut, **error_responses(400, 403, 404, 409)},
    )
    def post(self, request, workspace_id):
        access = self.access().require(Role.OWNER)
        data = validated(serializers.TopupIn, request.data)
        return self.idempotent(access, lambda: self._topup(access, data))

    def _topup(self, access, data) -> Response:
        wallet_topup(access=access, amount=data["amount"], memo=data["memo"])
        return Response(_balance(access.workspace.pk))


class PolicyApi(WorkspaceApi):
    serializer_class = serializers.PolicyOut

    @extend_schema(
        operation_id="billing_policy_retrieve", responses={200: serializers.PolicyOut, **error_responses(404)}
    )
    def get(self, request, workspace_id):
        policy = selectors.spend_policy_get(workspace_id=self.access().workspace.pk)
        return Response(serializers.PolicyOut(policy).data)

    @extend_schema(
        operation_id="billing_policy_update",
        description="Change how much may be spent without asking: per request, and per day. Owners only.",
        request=serializers.PolicyIn,
        responses={200: serializers.PolicyOut, **error_responses(400, 403, 404)},
    )
    def patch(self, request, workspace_id):
        access = self.access().require(Role.OWNER)
        data = validated(serializers.PolicyIn, request.data)
        policy = spend_policy_update(access=access, **data)
        return Response(serializers.PolicyOut(policy).data)
