"""A scripted person: logged in like a browser, it reads the open cards over REST and approves each one.

It talks to the running daphne processes only (round robin, so both web servers serve it), with a real
session cookie and the CSRF double-submit a browser page sends, so `approve` passes the "a person, not an API
key" rule through the same code as the studio. A request that fails because a server or the database is
restarting is simply tried again on the next round: the card is still open.
"""

import json
import secrets
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from django.conf import settings


def session_cookie(user) -> str:
    """A real logged-in session for `user`, stored in the database the servers read."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


@dataclass
class ScriptedPerson:
    workspace_ids: list[int]
    urls: list[str]
    session: str
    csrf: str = field(default_factory=lambda: secrets.token_hex(16))  # 32 characters, as Django's secret
    acted: int = 0
    errors: int = 0
    answered_at: dict[int, float] = field(default_factory=dict)  # card id → when we got the 200
    _turn: int = 0

    def _request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        url = self.urls[self._turn % len(self.urls)] + path
        self._turn += 1
        request = urllib.request.Request(  # noqa: S310 - our own local servers
            url,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Cookie": f"{settings.SESSION_COOKIE_NAME}={self.session}; {settings.CSRF_COOKIE_NAME}={self.csrf}",
                "X-CSRFToken": self.csrf,
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")

    def open_cards(self, workspace_id: int) -> list[dict]:
        cards, path = [], f"/api/v1/workspaces/{workspace_id}/cards/?status=open"
        while path:
            status, body = self._request("GET", path)
            if status != 200:
                raise RuntimeError(f"listing cards answered {status}: {body}")
            cards.extend(body["results"])
            following = body.get("next")
            path = following[following.index("/api/") :] if following else None
        return cards

    @staticmethod
    def answer(card: dict) -> dict | None:
        """What the person says: approve spending, confirm, or take the first option."""
        actions = card.get("actions", [])
        if "approve" in actions:
            return {"action": "approve"}
        if "confirm" in actions:
            return {"action": "confirm"}
        if "choose" in actions and card.get("options"):
            return {"action": "choose", "option": card["options"][0]["id"]}
        return None

    def act_once(self) -> int:
        """One round over every workspace: answer each open card. Returns how many it answered."""
        answered = 0
        for workspace_id in self.workspace_ids:
            try:
                cards = self.open_cards(workspace_id)
            except (OSError, RuntimeError, ValueError):
                self.errors += 1
                continue
            for card in cards:
                body = self.answer(card)
                if body is None:
                    continue
                try:
                    status, reply = self._request(
                        "POST", f"/api/v1/workspaces/{workspace_id}/cards/{card['id']}/actions/", body
                    )
                except (OSError, ValueError):
                    self.errors += 1
                    continue
                if status == 200:
                    answered += 1
                    self.answered_at[card["id"]] = time.monotonic()
                elif status != 409:  # 409: resolved or withdrawn meanwhile, nothing to do
                    self.errors += 1
        self.acted += answered
        return answered
