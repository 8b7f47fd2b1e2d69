"""Forget (DESIGN §8, seed §7.3 and figure 8): what a person designates stops feeding memory, and everything that
carried it — memory versions derived from it, the versions refined from those, profile entries, episodes,
search rows — is erased, then rebuilt from the evidence that remains.

    request   a person names a memory or a piece of evidence → a ForgetRequest waiting for its confirmation
              card (irreversible: always asked; agents opens the card)
    execute   in one transaction, under the workspace lock that extraction takes too:
              1. the evidence loses its right to feed memory (its copy of the words erased, a tombstone kept)
              2. affected versions: those the evidence stated or refined, and every later version that
                 superseded one of them (it carried its content on); confirm-only links are just unlinked
              3. their content erased (status forgotten), their search rows dropped, tombstones kept
              4. re-extraction from the remaining valid evidence of each affected memory → a new version
              5. episodes that drew on any of it rebuilt without the sentences that carried it
              6. profile entries that showed it erased (old versions too), the profile rebuilt → new version
              7. the forgotten terms kept as salted hashes, so no later context shows a message carrying them
                 (memory/redaction.py) — the agent's own earlier outputs included

Conversation history, artifacts and the ledger are not deleted (other lifecycles): they are kept out of
memory and out of every later context. A second forget of the same thing changes nothing more.
"""

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from lomote.kernel.domain_events import publish
from lomote.kernel.exceptions import InvalidInput, NotFound
from memory import domain_events
from memory.extraction.candidate import candidate_check
from memory.extraction.runner import candidates_extract
from memory.extraction.scripted import statement_subject
from memory.models import (
    Derivation,
    DerivationRole,
    Episode,
    EpisodeStatus,
    Evidence,
    EvidenceKind,
    ForgetRequest,
    ForgetStatus,
    ForgottenTerm,
    Memory,
    MemoryIndex,
    MemoryKind,
    MemoryVersion,
    ProfileEntry,
    Tombstone,
    VersionOperation,
    VersionStatus,
)
from memory.redaction import distinctive_words, forgotten_terms, mentions, sentences, text_terms
from memory.search import fold, goal_terms
from memory.services.index import index_drop, index_put
from memory.services.memories import normalised_key
from memory.services.profile import profile_rebuild
from memory.text import content_hash
from workspace.locks import workspace_qs_for_update
from workspace.models import Role
from workspace.selectors import Access
from workspace.services.events import event_append

logger = logging.getLogger(__name__)

STATING_ROLES = (DerivationRole.ORIGIN, DerivationRole.REFINE)
FORGOTTEN_SUBJECT = ""  # erased, like the contents
MAX_TERM_LOOKUPS = 40  # distinctive words of the erased texts looked up in what remains
MAX_STILL_SAID = 500  # remaining statements that share one of them, read to keep their words out of the terms


def forget_salt(workspace_id: int) -> str:
    return f"lomote-forget:{workspace_id}"


# --- asking -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ForgetTarget:
    memory: Memory | None
    evidence: Evidence | None


def forget_target(*, access: Access, memory_id: int | None = None, evidence: dict | None = None) -> ForgetTarget:
    """What the person designates, checked to be in their workspace (NotFound otherwise)."""
    if (memory_id is None) == (evidence is None):
        raise InvalidInput("Name either a memory or a piece of evidence to forget.", code="invalid")
    if memory_id is not None:
        memory = Memory.objects.filter(pk=memory_id, workspace=access.workspace).first()
        personal = memory is not None and memory.person_id is not None
        if memory is None or (personal and (access.user is None or memory.person_id != access.user.pk)):
            # Another person's own memory is theirs to forget: it answers as if it did not exist.
            raise NotFound(gettext_noop("Memory not found."))
        return ForgetTarget(memory, None)
    kind, source = evidence.get("type"), evidence.get("id")
    if kind not in (EvidenceKind.MAIN_MESSAGE, EvidenceKind.TASK_MESSAGE, EvidenceKind.ARTIFACT_VERSION):
        raise InvalidInput(
            "The evidence type must be main_message, task_message or artifact_version.",
            code="invalid_evidence_type",
            details={"type": kind},
        )
    found = Evidence.objects.filter(workspace=access.workspace, kind=kind, source_id=str(source)).first()
    if found is None:
        raise NotFound(gettext_noop("Nothing in memory came from that source."))
    return ForgetTarget(None, found)


@transaction.atomic
def forget_request(*, access: Access, target: ForgetTarget) -> tuple[ForgetRequest, bool]:
    """The request for `target` and whether it is new. A request already waiting for its card, or already
    done, for the same target is returned as it is: asking twice changes nothing more."""
    access.require(Role.EDITOR)
    same = ForgetRequest.objects.filter(
        workspace=access.workspace,
        status__in=[ForgetStatus.AWAITING_CONFIRMATION, ForgetStatus.DONE],
        memory=target.memory,
        evidence=target.evidence,
    ).first()
    if same is not None:
        return same, False
    request = ForgetRequest.objects.create(
        workspace=access.workspace, memory=target.memory, evidence=target.evidence, requested_by=access.user
    )
    return request, True


def forget_card_attach(request: ForgetRequest, card_id: int) -> None:
    ForgetRequest.objects.filter(pk=request.pk).update(card_id=card_id)


def forget_describe(request: ForgetRequest) -> str:
    """What the confirmation card says will be forgotten (the workspace's own words, shown to its members)."""
    if request.memory_id is not None:
        version = request.memory.versions.exclude(status=VersionStatus.FORGOTTEN).order_by("-number").first()
        what = (
            _("the memory “%(content)s”") % {"content": version.content}
            if version
            else _("memory %(id)s") % {"id": request.memory_id}
        )
    else:
        what = _("what was said in “%(text)s”") % {"text": request.evidence.text[:200]}
    return _(
        "Forget %(what)s? It stops feeding memory; memories, summaries and the profile built on it are erased and "
        "rebuilt from what remains, and no later context will show it. This cannot be undone."
    ) % {"what": what}


@transaction.atomic
def forget_cancel(*, workspace_id: int, forget_id: int) -> None:
    ForgetRequest.objects.filter(
        pk=forget_id, workspace_id=workspace_id, status=ForgetStatus.AWAITING_CONFIRMATION
    ).update(status=ForgetStatus.CANCELLED)


# --- doing ------------------------------------------------------------------------------------------------


def forget_execute(*, workspace_id: int, forget_id: int) -> ForgetRequest:
    """Carry out a confirmed forget (module docstring). Joins the caller's transaction (the card's)."""
    with transaction.atomic():
        workspace_qs_for_update().filter(pk=workspace_id).first()
        request = (
            ForgetRequest.objects.select_for_update(of=("self",), no_key=True)
            .filter(pk=forget_id, workspace_id=workspace_id)
            .first()
        )
        if request is None:
            raise NotFound(gettext_noop("Forget request not found."))
        if request.status != ForgetStatus.AWAITING_CONFIRMATION:
            return request
        report = _Forgetting(workspace_id, request).run()
        request.status, request.done_at, request.report = ForgetStatus.DONE, timezone.now(), report
        request.save(update_fields=["status", "done_at", "report"])
        event_append(workspace_id=workspace_id, kind="memory.forgotten", data={"forget": request.pk, **report})
        publish(domain_events.MEMORY_FORGOTTEN, workspace_id=workspace_id, forget_id=request.pk)
    return request


class _Forgetting:
    def __init__(self, workspace_id: int, request: ForgetRequest):
        self.workspace_id = workspace_id
        self.request = request
        self.erased_texts: list[str] = []

    def run(self) -> dict:
        revoked = self._evidence()
        versions = self._affected(revoked)
        unlinked = Derivation.objects.filter(
            evidence__in=revoked, role=DerivationRole.CONFIRM, version__isnull=False
        ).exclude(version__in=versions)
        unlinked_count = unlinked.count()
        unlinked.delete()
        memories = sorted({v.memory_id for v in versions})
        self._erase_versions(versions)
        self._erase_evidence(revoked)
        rebuilt = [v.pk for v in self._reextract(memories, revoked)]
        episodes = self._episodes(revoked, versions)
        profile = self._profile(versions)
        terms = self._terms()
        tombstones = self._tombstones()
        return {
            "evidence_revoked": [e.pk for e in revoked],
            "versions_erased": [v.pk for v in versions],
            "confirmations_unlinked": unlinked_count,
            "versions_rebuilt": rebuilt,
            "episodes_rebuilt": episodes,
            "profile_version": profile,
            "terms": terms,
            "tombstones": tombstones,
        }

    def _evidence(self) -> list[Evidence]:
        """The evidence that loses its right to feed memory: the one named, or what stated the named memory."""
        if self.request.evidence_id is not None:
            ids = [self.request.evidence_id]
        else:
            ids = Derivation.objects.filter(
                version__memory_id=self.request.memory_id, role__in=STATING_ROLES, evidence__isnull=False
            ).values_list("evidence_id", flat=True)
        return list(
            Evidence.objects.select_for_update(of=("self",), no_key=True).filter(pk__in=list(ids)).order_by("pk")
        )

    def _affected(self, revoked: list[Evidence]) -> list[MemoryVersion]:
        """Versions the evidence stated or refined, then every version that superseded one of them."""
        found = set(
            Derivation.objects.filter(evidence__in=revoked, role__in=STATING_ROLES, version__isnull=False).values_list(
                "version_id", flat=True
            )
        )
        if self.request.memory_id is not None:
            found |= set(MemoryVersion.objects.filter(memory_id=self.request.memory_id).values_list("pk", flat=True))
        frontier = set(found)
        while frontier:
            later = (
                set(
                    Derivation.objects.filter(from_version__in=frontier, version__isnull=False).values_list(
                        "version_id", flat=True
                    )
                )
                - found
            )
            found |= later
            frontier = later
        return list(
            MemoryVersion.objects.select_for_update(of=("self",), no_key=True).filter(pk__in=found).order_by("pk")
        )

    def _erase_versions(self, versions: list[MemoryVersion]) -> None:
        now = timezone.now()
        self.erased_texts += [v.content for v in versions if v.content]
        index_drop(versions)
        MemoryVersion.objects.filter(pk__in=[v.pk for v in versions]).update(
            content="", normalised="", status=VersionStatus.FORGOTTEN, erased_at=now
        )
        MemoryVersion.objects.filter(pk__in=[v.pk for v in versions], valid_to__isnull=True).update(valid_to=now)

    def _erase_evidence(self, revoked: list[Evidence]) -> None:
        self.erased_texts += [e.text for e in revoked if e.text]
        Evidence.objects.filter(pk__in=[e.pk for e in revoked]).update(
            feeds_memory=False, revoked_at=timezone.now(), text=""
        )

    def _tombstones(self) -> int:
        """The erased statements, as hashes, so that they are not extracted again — except what a remaining,
        independent source stated too and was rebuilt from it."""
        standing = {
            content_hash(c)
            for c in MemoryVersion.objects.filter(
                workspace_id=self.workspace_id, status=VersionStatus.ACTIVE
            ).values_list("content", flat=True)
        }
        hashes = {content_hash(text) for text in self.erased_texts} - standing
        Tombstone.objects.bulk_create(
            [Tombstone(workspace_id=self.workspace_id, content_hash=h) for h in sorted(hashes)], ignore_conflicts=True
        )
        return len(hashes)

    def _reextract(self, memory_ids: list[int], revoked: list[Evidence]) -> list[MemoryVersion]:
        """Each affected memory, rebuilt from the evidence that still feeds it, in the order it was stated."""
        made = []
        for memory in Memory.objects.filter(pk__in=memory_ids).order_by("pk"):
            remaining = list(
                Evidence.objects.filter(
                    derivations__version__memory=memory, feeds_memory=True, workspace_id=self.workspace_id
                )
                .exclude(pk__in=[e.pk for e in revoked])
                .distinct()
                .order_by("created_at", "pk")
            )
            last_kind = memory.versions.order_by("-number").values_list("kind", flat=True).first()
            version = self._rebuild(memory, remaining, last_kind or MemoryKind.PREFERENCE)
            if version is not None:
                made.append(version)
            self._resubject(memory, version, remaining)
        return made

    def _resubject(self, memory: Memory, version: MemoryVersion | None, remaining: list[Evidence]) -> None:
        """A memory's subject was read from its statements: when no remaining one says it, it goes too — read
        again from the rebuilt content, or erased with the memory."""
        said = " ".join(e.text for e in remaining).casefold()
        if version is not None and all(word in said for word in memory.subject.split()):
            return
        self.erased_texts.append(memory.subject)
        memory.subject = statement_subject(version.content) if version is not None else FORGOTTEN_SUBJECT
        memory.save(update_fields=["subject", "updated_at"])
        if version is not None:
            index_put(version)  # the search row holds the subject too

    def _rebuild(self, memory: Memory, remaining: list[Evidence], last_kind: str) -> MemoryVersion | None:
        """The memory as its remaining evidence states it, in order: what the extractor reads in each about
        this memory's subject — or, when it reads nothing on its own (it had needed the erased statement to see
        the subject), the evidence's own words: that evidence was already judged to be about this memory."""
        content, kind, used = "", None, []
        known = [{"subject": memory.subject, "content": "", "kind": last_kind, "scope": memory.scope}]
        for evidence in remaining:
            found, _ = candidates_extract(
                workspace_id=self.workspace_id, task_id=evidence.task_id, text=evidence.text, existing=known
            )
            checked = [c for c in (candidate_check(raw)[0] for raw in found) if c is not None]
            stated = [(c.content, c.kind) for c in checked if c.subject == memory.subject]
            if not checked and evidence.text.strip():
                stated = [(" ".join(evidence.text.split()).rstrip("."), last_kind)]
            for said, said_kind in stated:
                if Tombstone.objects.filter(workspace_id=self.workspace_id, content_hash=content_hash(said)).exists():
                    continue  # forgotten by an earlier forget
                content, kind = said, said_kind if evidence.from_person else MemoryKind.HYPOTHESIS
                used.append(evidence)
        if (
            not content
            or MemoryVersion.objects.filter(
                workspace_id=self.workspace_id, status=VersionStatus.ACTIVE, normalised=normalised_key(content)
            ).exists()
        ):
            return None
        number = (memory.versions.order_by("-number").values_list("number", flat=True).first() or 0) + 1
        version = MemoryVersion.objects.create(
            workspace_id=self.workspace_id,
            memory=memory,
            number=number,
            kind=kind,
            operation=VersionOperation.REEXTRACT,
            content=content,
            normalised=normalised_key(content),
            valid_from=used[-1].created_at,
        )
        Derivation.objects.bulk_create(
            Derivation(workspace_id=self.workspace_id, role=DerivationRole.ORIGIN, version=version, evidence=e)
            for e in dict.fromkeys(used)
        )
        index_put(version)
        return version

    def _episodes(self, revoked: list[Evidence], versions: list[MemoryVersion]) -> list[int]:
        """Episodes that drew on the forgotten content, rewritten without the sentences that carried it."""
        links = Derivation.objects.filter(Q(evidence__in=revoked) | Q(from_version__in=versions), episode__isnull=False)
        ids = sorted(set(links.values_list("episode_id", flat=True)))
        terms = forgotten_terms(self.erased_texts, [], salt=forget_salt(self.workspace_id))
        for episode in Episode.objects.select_for_update(of=("self",), no_key=True).filter(pk__in=ids):
            kept = [
                s for s in sentences(episode.summary) if not mentions(s, terms, salt=forget_salt(self.workspace_id))
            ]
            episode.summary = " ".join(kept) or "(Rebuilt after a forget: nothing of it remained.)"
            episode.status = EpisodeStatus.FORGOTTEN
            episode.save(update_fields=["summary", "status", "updated_at"])
        links.delete()
        return ids

    def _profile(self, versions: list[MemoryVersion]) -> int | None:
        """Profile entries that showed an erased version are erased in every profile version; then a new one."""
        for text in ProfileEntry.objects.filter(version__in=versions).values_list("text", flat=True):
            if text:
                self.erased_texts.append(text)
        ProfileEntry.objects.filter(version__in=versions).update(text="")
        profile = profile_rebuild(workspace_id=self.workspace_id, reason="forget")
        return profile.number if profile is not None else None

    def _terms(self) -> int:
        """The forgotten terms, kept as hashes: what no later context may show (memory/redaction.py)."""
        salt = forget_salt(self.workspace_id)
        terms = forgotten_terms(self.erased_texts, self._still_said(), salt=salt)
        ForgottenTerm.objects.bulk_create(
            [ForgottenTerm(workspace_id=self.workspace_id, term=t, forget=self.request) for t in sorted(terms)],
            ignore_conflicts=True,
        )
        return len(terms)

    def _still_said(self) -> list[str]:
        """What remaining memory still says with the erased words: the active versions and valid evidence that
        share a distinctive word with them — found through the search rows and the words, not by reading the
        whole workspace."""
        words = sorted({w for text in self.erased_texts for w in distinctive_words(text)})[:MAX_TERM_LOOKUPS]
        if not words:
            return []
        documents, evidence = Q(), Q()
        for word in words:
            documents |= Q(document__icontains=fold(word))  # search rows hold folded text
            evidence |= Q(text__icontains=word)
        rows = MemoryIndex.objects.filter(workspace_id=self.workspace_id).filter(documents)
        said = list(rows.values_list("version__content", flat=True)[:MAX_STILL_SAID])
        valid = Evidence.objects.filter(workspace_id=self.workspace_id, feeds_memory=True).filter(evidence)
        said += list(valid.values_list("text", flat=True)[:MAX_STILL_SAID])
        return said


# --- reading ------------------------------------------------------------------------------------------------


MATCH_SHARE = 0.5  # of the description's content words a memory must share to be the one it names


def forget_match(*, workspace_id: int, person_id: int | None, description: str) -> Memory | None:
    """The active memory a person's description of what to forget names ("our main colour is blue"): the one
    sharing the most of its content words, and at least half of them; None when nothing is close enough.
    The person's own personal memories are candidates; another person's are not."""
    terms = goal_terms(description)
    if not terms:
        return None
    rows = MemoryIndex.objects.filter(workspace_id=workspace_id).filter(
        Q(version__memory__person__isnull=True) | Q(version__memory__person_id=person_id)
    )
    query = Q()
    for term in terms:
        query |= Q(document__icontains=term)
    best, best_score = None, 0.0
    for memory_id, document in rows.filter(query).values_list("version__memory_id", "document")[:500]:
        words = set(goal_terms(document))
        score = sum(1 for t in terms if t in words) / len(terms)
        if score > best_score:
            best, best_score = memory_id, score
    if best is None or best_score < MATCH_SHARE:
        return None
    return Memory.objects.get(pk=best)


def forgotten_terms_of(workspace_id: int) -> frozenset[str]:
    """The workspace's forgotten terms (hashes), for the context builder's last pass."""
    return frozenset(ForgottenTerm.objects.filter(workspace_id=workspace_id).values_list("term", flat=True))


def carries_forgotten(text: str, terms: frozenset[str], workspace_id: int) -> bool:
    return bool(terms) and not terms.isdisjoint(text_terms(text, salt=forget_salt(workspace_id)))
