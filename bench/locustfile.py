"""Locust users for `bench/load_bench.py` (issue 17 item 2): people who post messages to their task, act on
its open cards and read their workspace's events, through the public API with an editor API key each.

The people (workspace, task, key) come from the JSON file named by LOMOTE_LOAD_PEOPLE, made by the bench.
Any response other than the expected status counts as an error; a card resolved meanwhile (409) too —
each person acts only on their own task's cards, so nobody else resolves them.
"""

import itertools
import json
import os
import threading

from locust import HttpUser, between, task

_people = json.loads(open(os.environ["LOMOTE_LOAD_PEOPLE"]).read())  # noqa: SIM115 - read once at import
_next = itertools.count()
_lock = threading.Lock()

# The simplest action each card kind accepts without a free-text field.
PREFERRED = ("approve", "confirm", "choose", "decline")


def _results(body):
    return body["results"] if isinstance(body, dict) else body


class Person(HttpUser):
    wait_time = between(0.5, 2.0)

    def on_start(self):
        with _lock:
            me = _people[next(_next) % len(_people)]
        self.workspace, self.task_id = me["workspace"], me["task"]
        self.client.headers["Authorization"] = f"Bearer {me['key']}"
        self.after = 0

    @task(3)
    def post_message(self):
        self.client.post(
            f"/api/v1/workspaces/{self.workspace}/tasks/{self.task_id}/messages/",
            json={"text": "Please keep the palette warm."},
            name="POST message",
        )

    @task(4)
    def read_events(self):
        with self.client.get(
            f"/api/v1/workspaces/{self.workspace}/events/",
            params={"after": self.after},
            name="GET events",
            catch_response=True,
        ) as response:
            if response.status_code != 200:
                response.failure(f"status {response.status_code}")
                return
            events = _results(response.json())
            if events:
                self.after = max(event["seq"] for event in events)
            response.success()

    @task(1)
    def act_on_a_card(self):
        listed = self.client.get(
            f"/api/v1/workspaces/{self.workspace}/cards/",
            params={"status": "open", "task": self.task_id},
            name="GET open cards",
        )
        if listed.status_code != 200:
            return
        for card in _results(listed.json()):
            action = next((a for a in PREFERRED if a in card.get("actions", [])), None)
            if action is None:
                continue
            body = {"action": action}
            if action == "choose":
                body["option"] = card["options"][0]["id"]
            self.client.post(
                f"/api/v1/workspaces/{self.workspace}/cards/{card['id']}/actions/", json=body, name="POST card action"
            )
            return
