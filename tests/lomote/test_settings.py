from django.conf import settings


def test_it_keeps_q_retry_above_every_task_timeout_plus_queue_wait():
    # given the ORM broker redelivers a task still running after `retry` seconds (at-least-once)
    largest = max(settings.LOMOTE_TASK_TIMEOUTS.values())
    # then no task can run long enough to be handed to a second worker
    assert settings.Q_CLUSTER["timeout"] >= largest
    assert settings.Q_CLUSTER["retry"] > settings.Q_CLUSTER["timeout"] + settings.LOMOTE_QUEUE_WAIT_MARGIN


def test_it_keeps_model_attempts_within_the_q_timeout():
    budget = settings.LOMOTE_MODEL_TIMEOUT * settings.LOMOTE_MODEL_MAX_ATTEMPTS
    assert budget < settings.Q_CLUSTER["timeout"]


def test_it_uses_the_orm_broker_on_the_main_database():
    assert settings.Q_CLUSTER["orm"] == "default"


def test_it_never_allows_every_host():
    assert "*" not in settings.ALLOWED_HOSTS
