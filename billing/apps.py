from django.apps import AppConfig


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing"

    def ready(self):
        from billing.subscribers import money_held_for, on_flow_node_closed, on_job_settled
        from lomote.kernel.domain_events import subscribe
        from workspace.flows.nodes import spend_check_install
        from workspace.flows.runner import FLOW_NODE_CLOSED

        subscribe("generation.job_settled")(on_job_settled)
        subscribe(FLOW_NODE_CLOSED)(on_flow_node_closed)
        spend_check_install(money_held_for)
