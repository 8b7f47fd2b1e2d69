"""Memories and their version chains (DESIGN §8, seed §7.3): ORIGIN, REFINE, CONFIRM.

`candidates_apply` decides, candidate by candidate, against the workspace's active memories:
- the same content (normal form) as an active version → CONFIRM: a derivation link, no new version (a
  person restating a model's hypothesis makes it theirs instead: REFINE with their kind);
- the same subject, scope and person, with other content → REFINE: the next version; the previous one is
  SUPERSEDED, its period closed where the new one's opens (the evidence's time), so "as of" reads find
  exactly one; derivations link the new version to its evidence (refine) and to the version it replaces
  (supersedes). A candidate marked `adds` builds on the old version instead of replacing it (see `_merged`);
- nothing of the kind → ORIGIN: a new memory, version 1, linked to its evidence;
- forgotten words (a tombstone) → ignored.
One-off instructions live beside durable memories of the same subject and never supersede them; hypotheses
(all that evidence not from a person may yield) never supersede what a person stated. A malformed candidate
is refused with its reason; the others go on.

Locks, always in this order: the workspace row (every memory decision of a workspace is serialised on it —
event_append takes it anyway), then the evidence row, then memory rows. Events (`memory.created`, `…refined`,
`…confirmed`) carry ids only, never content.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils.translation import gettext_noop

from lomote.kernel import domain_events as kernel_events
from lomote.kernel.exceptions import Conflict, InvalidInput, NotFound
from memory import domain_events
from memory.extraction.candidate import MAX_CONTENT_CHARS, Candidate, candidate_check
from memory.extraction.scripted import statement_subject
from memory.models import (
    Derivation,
    DerivationRole,
    Evidence,
    Memory,
    MemoryKind,
    MemoryScope,
    MemoryVersion,
    VersionOperation,
    VersionStatus,
)
from memory.services.evidence import evidence_statement_record, tombstoned
from memory.services.index import index_drop, index_put
from memory.services.profile import profile_rebuild
from memory.text import content_hash, normalise
from workspace.locks import workspace_qs_for_update
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append

logger = logging.getLogger(__name__)

MAX_CANDIDATES = 20
MAX_NORMALISED = 500  # MemoryVersion.normalised
RECENT_EXISTING = 200
DURABLE = (MemoryKind.PREFERENCE, MemoryKind.FACT, MemoryKind.HYPOTHESIS)
PERSON_KINDS = (MemoryKind.PREFERENCE, MemoryKind.INSTRUCTION, MemoryKind.FACT)


class Action:
    ORIGIN = "origin"
    REFINE = "refine"
    CONFIRM = "confirm"
    IGNORED = "ignored"
    INVALID = "invalid"


@dataclass(frozen=True)
class Outcome:
    """What became of one candidate (`index`: its place in the list): the memory and version it made or
    confirmed, or why it was ignored or refused."""

    index: int
    action: str
    memory_id: int | None = None
    version_id: int | None = None
    reason: str = ""


def normalised_key(content: str) -> str:
    """What the unique active-content constraint compares: the normal form, cut to its column with the hash
    of the whole kept at the end, so two long statements that only share a beginning stay distinct."""
    normal = normalise(content)
    if len(normal) <= MAX_NORMALISED:
        return normal
    return normal[: MAX_NORMALISED - 65] + "#" + content_hash(content)


def memories_existing(*, workspace_id: int, limit: int = RECENT_EXISTING) -> list[dict]:
    """The workspace's active memories an extractor may refine or add to, most recent first."""
    versions = (
        MemoryVersion.objects.filter(workspace_id=workspace_id, status=VersionStatus.ACTIVE)
        .exclude(content="")
        .select_related("memory")
        .order_by("-valid_from", "-id")[:limit]
    )
    return [
        {"subject": v.memory.subject, "content": v.content, "kind": v.kind, "scope": v.memory.scope} for v in versions
    ]


# --- deciding ---------------------------------------------------------------------------------------------


def candidates_apply(evidence: Evidence, candidates: Sequence[Any]) -> list[Outcome]:
    """Decide ORIGIN / REFINE / CONFIRM / ignore for each candidate extracted from `evidence` (module
    docstring); one outcome per candidate, in order. Joins the caller's transaction (opens one without);
    takes the workspace row lock first. Evidence that lost its right to feed memory yields nothing."""
    with transaction.atomic():
        workspace_qs_for_update().filter(pk=evidence.workspace_id).first()
        if not Evidence.objects.filter(pk=evidence.pk, feeds_memory=True).exists():
            return [
                Outcome(i, Action.IGNORED, reason="the evidence no longer feeds memory") for i in range(len(candidates))
            ]
        outcomes = []
        for index, raw in enumerate(candidates):
            if index >= MAX_CANDIDATES:
                outcomes.append(Outcome(index, Action.INVALID, reason=f"more than {MAX_CANDIDATES} candidates"))
                continue
            outcomes.append(_apply_one(evidence, index, raw))
        for outcome in outcomes:
            if outcome.action == Action.INVALID:
                logger.info("evidence %s: candidate %s refused: %s", evidence.pk, outcome.index, outcome.reason)
        if any(o.action in (Action.ORIGIN, Action.REFINE, Action.CONFIRM) for o in outcomes):
            # The profile follows memory: a new version whenever its entries change (never for nothing).
            profile_rebuild(workspace_id=evidence.workspace_id, reason="memory changed")
        return outcomes


def _apply_one(evidence: Evidence, index: int, raw: Any) -> Outcome:
    candidate, why = candidate_check(raw)
    if candidate is None:
        return Outcome(index, Action.INVALID, reason=why)
    try:
        with transaction.atomic():  # a savepoint: a candidate that breaks a constraint loses nothing else
            return _decide(evidence, index, candidate)
    except IntegrityError:
        logger.warning("evidence %s: candidate %s broke a constraint", evidence.pk, index, exc_info=True)
        return Outcome(index, Action.INVALID, reason="it conflicts with another active memory")


def _decide(evidence: Evidence, index: int, candidate: Candidate) -> Outcome:
    # What evidence not from a person may say is a guess about them, never a fact or a preference (seed §7.1).
    kind = candidate.kind if evidence.from_person else MemoryKind.HYPOTHESIS
    person_id = evidence.stated_by_id if candidate.scope == MemoryScope.PERSON and evidence.from_person else None
    scope = MemoryScope.PERSON if person_id else MemoryScope.WORKSPACE
    if tombstoned(workspace_id=evidence.workspace_id, text=candidate.content):
        return Outcome(index, Action.IGNORED, reason="these words were forgotten")

    key = normalised_key(candidate.content)
    same = (
        MemoryVersion.objects.filter(workspace_id=evidence.workspace_id, status=VersionStatus.ACTIVE, normalised=key)
        .select_related("memory")
        .first()
    )
    if same is not None:
        if same.kind == MemoryKind.HYPOTHESIS and kind != MemoryKind.HYPOTHESIS:
            memory = _memory_locked(same.memory_id)
            return _refine(index, memory, _active(memory), evidence, candidate.content, kind)
        return _confirm(index, same, evidence)

    kinds = (MemoryKind.INSTRUCTION,) if kind == MemoryKind.INSTRUCTION else DURABLE
    match = (
        Memory.objects.filter(
            workspace_id=evidence.workspace_id,
            subject=candidate.subject,
            scope=scope,
            person_id=person_id,
            versions__status=VersionStatus.ACTIVE,
            versions__kind__in=kinds,
        )
        .order_by("-updated_at", "-id")
        .values_list("pk", flat=True)
        .first()
    )
    if match is None:
        return _origin(index, evidence, candidate, kind, scope, person_id)
    memory = _memory_locked(match)
    active = _active(memory)
    if active is None:  # forgotten between the read and the lock
        return _origin(index, evidence, candidate, kind, scope, person_id)
    if kind == MemoryKind.HYPOTHESIS and active.kind != MemoryKind.HYPOTHESIS:
        return Outcome(index, Action.IGNORED, memory.pk, active.pk, "a person's own statement stands over a guess")
    if evidence.created_at < active.valid_from:
        return Outcome(index, Action.IGNORED, memory.pk, active.pk, "the current version is newer than this evidence")
    content = _merged(active.content, candidate.content) if candidate.adds else candidate.content
    if normalised_key(content) == active.normalised:
        return _confirm(index, active, evidence)
    return _refine(index, memory, active, evidence, content, kind)


def _merged(old: str, new: str) -> str:
    """The scripted rule for a statement that builds on a memory ("blue with an off-white feels softer" after
    "our brand's main colour is blue"): the new version keeps the old words and adds the new ones, so nothing
    the person said is lost — "Our brand's main colour is blue; blue with an off-white feels softer". A
    statement that names its subject outright is not marked `adds`: it gives the whole current value, and
    replaces. The old words already holding the new ones, or a merge too long to keep, leave the new words."""
    old, new = old.strip().rstrip("."), new.strip()
    if normalise(new) in normalise(old):
        return old
    merged = f"{old}; {new}"
    return merged if len(merged) <= MAX_CONTENT_CHARS else new


# --- the three operations -----------------------------------------------------------------------------


def _memory_locked(memory_id: int) -> Memory:
    return Memory.objects.order_by("pk").select_for_update(of=("self",), no_key=True).get(pk=memory_id)


def _active(memory: Memory) -> MemoryVersion | None:
    version = memory.versions.filter(status=VersionStatus.ACTIVE).first()
    if version is not None:
        version.memory = memory
    return version


def _origin(
    index: int, evidence: Evidence, candidate: Candidate, kind: str, scope: str, person_id: int | None
) -> Outcome:
    memory = Memory.objects.create(
        workspace_id=evidence.workspace_id, scope=scope, person_id=person_id, subject=candidate.subject
    )
    version = MemoryVersion.objects.create(
        workspace_id=evidence.workspace_id,
        memory=memory,
        number=1,
        kind=kind,
        operation=VersionOperation.ORIGIN,
        content=candidate.content,
        normalised=normalised_key(candidate.content),
        valid_from=evidence.created_at,
    )
    Derivation.objects.create(
        workspace_id=evidence.workspace_id, role=DerivationRole.ORIGIN, version=version, evidence=evidence
    )
    index_put(version)
    _announce(domain_events.MEMORY_CREATED, version, evidence)
    return Outcome(index, Action.ORIGIN, memory.pk, version.pk)


def _refine(index: int, memory: Memory, active: MemoryVersion, evidence: Evidence, content: str, kind: str) -> Outcome:
    """The next version of a locked memory; `active` is SUPERSEDED where the new version's period opens."""
    at = max(evidence.created_at, active.valid_from)
    closed = MemoryVersion.objects.filter(pk=active.pk, status=VersionStatus.ACTIVE).update(
        status=VersionStatus.SUPERSEDED, valid_to=at
    )
    if closed != 1:
        raise Conflict("The memory changed meanwhile.", code="memory_changed")
    index_drop([active.pk])
    number = (memory.versions.aggregate(last=Max("number"))["last"] or 0) + 1
    version = MemoryVersion.objects.create(
        workspace_id=memory.workspace_id,
        memory=memory,
        number=number,
        kind=kind,
        operation=VersionOperation.REFINE,
        content=content,
        normalised=normalised_key(content),
        valid_from=at,
    )
    Derivation.objects.bulk_create(
        [
            Derivation(
                workspace_id=memory.workspace_id, role=DerivationRole.REFINE, version=version, evidence=evidence
            ),
            Derivation(
                workspace_id=memory.workspace_id, role=DerivationRole.SUPERSEDES, version=version, from_version=active
            ),
        ]
    )
    memory.save(update_fields=["updated_at"])
    index_put(version)
    _announce(domain_events.MEMORY_REFINED, version, evidence, superseded=active)
    return Outcome(index, Action.REFINE, memory.pk, version.pk)


def _confirm(index: int, version: MemoryVersion, evidence: Evidence) -> Outcome:
    """Link the evidence to the version it restates (once: a replay or a repeated sentence adds nothing)."""
    linked = Derivation.objects.filter(version=version, evidence=evidence).exists()
    if not linked:
        Derivation.objects.create(
            workspace_id=version.workspace_id, role=DerivationRole.CONFIRM, version=version, evidence=evidence
        )
        _announce(domain_events.MEMORY_CONFIRMED, version, evidence)
    return Outcome(index, Action.CONFIRM, version.memory_id, version.pk)


def _announce(event: str, version: MemoryVersion, evidence: Evidence, superseded: MemoryVersion | None = None) -> None:
    data = {
        "memory": version.memory_id,
        "version": version.pk,
        "number": version.number,
        "kind": version.kind,
        "evidence": evidence.pk,
    }
    if superseded is not None:
        data["superseded"] = superseded.pk
    event_append(workspace_id=version.workspace_id, kind=event, data=data)
    kernel_events.publish(
        event,
        workspace_id=version.workspace_id,
        memory_id=version.memory_id,
        version_id=version.pk,
        number=version.number,
        kind=version.kind,
        evidence_id=evidence.pk,
        **({"superseded_version_id": superseded.pk} if superseded is not None else {}),
    )


# --- a person's own operations (the memory panel, REST) ----------------------------------------------------


def _speaker_id(access: Access) -> int:
    """The person behind the call: the user, or the person who made the API key."""
    user = access.user if access.user is not None else getattr(access.api_key, "created_by", None)
    if user is None:
        raise InvalidInput("Memory records what a person states; this API key has no person.", code="no_person")
    return user.pk


def _statement(access: Access, text: str) -> Evidence:
    evidence = evidence_statement_record(workspace_id=access.workspace.pk, text=text, stated_by_id=_speaker_id(access))
    if evidence is None:
        raise Conflict("These words were forgotten in this workspace; they are not remembered again.", code="forgotten")
    return evidence


def _content_checked(content: str) -> str:
    content = (content or "").strip()
    if not content:
        raise InvalidInput("The memory is empty.", code="empty_memory")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInput(f"A memory holds at most {MAX_CONTENT_CHARS} characters.", code="memory_too_long")
    return content


def _kind_checked(kind: str) -> str:
    if kind not in PERSON_KINDS:
        raise InvalidInput(
            "A person states a preference, an instruction or a fact.",
            code="invalid_kind",
            details={"allowed": list(PERSON_KINDS), "kind": kind},
        )
    return kind


def _memory_of(access: Access, memory_id: int) -> tuple[Memory, MemoryVersion]:
    """The locked memory of the caller's workspace (NotFound elsewhere) and its active version."""
    memory = (
        Memory.objects.order_by("pk")
        .select_for_update(of=("self",), no_key=True)
        .filter(pk=memory_id, workspace=access.workspace)
        .first()
    )
    if memory is None:
        raise NotFound(gettext_noop("Memory not found."))
    active = _active(memory)
    if active is None:
        raise Conflict("This memory was forgotten.", code="memory_forgotten")
    return memory, active


def _refused(outcome: Outcome) -> None:
    if outcome.action == Action.INVALID:
        raise Conflict("Another memory already says this.", code="memory_duplicate", details={"reason": outcome.reason})
    if outcome.action == Action.IGNORED:
        raise Conflict(outcome.reason, code="memory_ignored")


@transaction.atomic
def memory_state(*, access: Access, content: str, kind: str, scope: str = MemoryScope.WORKSPACE) -> Memory:
    """A person states a memory directly (evidence kind STATEMENT). Decided like any statement: it may confirm
    or refine a memory with the same content or subject. Editors and owners; returns the memory it landed in."""
    access.require(Role.EDITOR)
    content, kind = _content_checked(content), _kind_checked(kind)
    if scope not in MemoryScope.values:
        raise InvalidInput("The scope is workspace or person.", code="invalid_scope", details={"scope": scope})
    workspace_qs_for_update().filter(pk=access.workspace.pk).first()
    evidence = _statement(access, content)
    candidate = {"content": content, "subject": statement_subject(content), "kind": kind, "scope": scope}
    outcome = candidates_apply(evidence, [candidate])[0]
    _refused(outcome)
    return Memory.objects.get(pk=outcome.memory_id)


@transaction.atomic
def memory_correct(*, access: Access, memory_id: int, content: str, kind: str | None = None) -> Memory:
    """A person corrects a memory: its next version says `content` (REFINE), its kind kept unless given (a
    corrected hypothesis becomes the person's fact). The same content as now only confirms it; the content of
    another active memory is a Conflict. Another workspace's memory is NotFound. Editors and owners."""
    access.require(Role.EDITOR)
    content = _content_checked(content)
    workspace_qs_for_update().filter(pk=access.workspace.pk).first()
    memory, active = _memory_of(access, memory_id)
    kind = _kind_checked(kind) if kind else (MemoryKind.FACT if active.kind == MemoryKind.HYPOTHESIS else active.kind)
    evidence = _statement(access, content)
    key = normalised_key(content)
    if key == active.normalised and kind == active.kind:
        outcome = _confirm(0, active, evidence)
    else:
        other = (
            MemoryVersion.objects.filter(workspace=access.workspace, status=VersionStatus.ACTIVE, normalised=key)
            .exclude(memory=memory)
            .values_list("memory_id", flat=True)
            .first()
        )
        if other is not None:
            raise Conflict("Another memory already says this.", code="memory_duplicate", details={"memory": other})
        outcome = _refine(0, memory, active, evidence, content, kind)
    profile_rebuild(workspace_id=access.workspace.pk, reason="memory corrected")
    return Memory.objects.get(pk=outcome.memory_id)


@transaction.atomic
def memory_confirm(*, access: Access, memory_id: int) -> Memory:
    """A person confirms a memory as it stands (CONFIRM: linked to a statement of theirs, no new version).
    Another workspace's memory is NotFound. Editors and owners."""
    access.require(Role.EDITOR)
    workspace_qs_for_update().filter(pk=access.workspace.pk).first()
    memory, active = _memory_of(access, memory_id)
    # The statement's words stay empty: the version it confirms holds them, and a forget erases them there.
    _confirm(0, active, _statement(access, ""))
    memory.save(update_fields=["updated_at"])
    profile_rebuild(workspace_id=access.workspace.pk, reason="memory confirmed")
    return memory
