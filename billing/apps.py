from django.apps import AppConfig


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing"

    def ready(self):
        from billing.subscribers import on_job_settled
        from lomote.domain_events import subscribe

        subscribe("generation.job_settled")(on_job_settled)
