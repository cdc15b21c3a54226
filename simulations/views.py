"""The simulations app's pages: simulation sessions (list with a create form, page, checkpoint buttons
and a placement form).

Reading follows the API's owner rule (``simulations.sessions``): a session's owner or an operator.
Writing goes through the same functions as the API's verbs, logged in with the operators role.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from hami_sim.pages import figures
from hami_sim.pages.access import dashboard_view
from hami_sim.pages.lists import list_page, paginate
from hami_sim.project.permissions import Caller, caller_of
from profiles.models import NodeGroup
from profiles.nodetemplates import group_template

from . import sessions
from .filtersets import SessionFilterSet
from .forms import PlacementForm, SessionCreateForm
from .models import SimulationSession
from .sessions import SessionError
from .tables import SessionPlacementTable, SessionTable

__all__ = ["session_list", "session_detail", "session_action", "session_place"]


def _readable_sessions(caller: Caller):
    """The sessions a dashboard reader may see, expired ones included: by the API's owner rule
    (``simulations.sessions.visible_sessions``), every session for an operator, else its own."""
    sessions_ = SimulationSession.objects.all()
    return sessions_ if caller.operator else sessions_.filter(owner=caller.identity)


def _session_error(request: HttpRequest, exc: SessionError) -> None:
    messages.error(request, f"{exc.error} (HTTP {exc.status})")


def _create(request: HttpRequest) -> HttpResponse:
    """The create form's POST: a new session (its page), or back to the list with the error."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
    if not request.user.has_perm("simulations.add_simulationsession"):
        raise PermissionDenied("creating a session needs the operators role")
    form = SessionCreateForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
        return redirect("dashboard:sessions")
    body = {"name": form.cleaned_data["name"], "ttlSeconds": form.cleaned_data["ttl_seconds"]}
    try:
        created = sessions.create_session(body)
    except SessionError as exc:
        _session_error(request, exc)
        return redirect("dashboard:sessions")
    messages.success(request, f"session {created['id']} created")
    return redirect("dashboard:session", pk=created["id"])


@dashboard_view
def session_list(request: HttpRequest) -> HttpResponse:
    """The sessions, and (logged in) a form that creates one, as ``POST /api/v1/sessions`` does."""
    if request.method == "POST":
        return _create(request)
    may_create = request.user.has_perm("simulations.add_simulationsession")
    return list_page(
        request,
        "Simulation sessions",
        _readable_sessions(caller_of(request)),
        SessionFilterSet,
        SessionTable,
        "/api/v1/sessions/",
        template="simulations/session_list.html",
        extra={"create_form": SessionCreateForm() if may_create else None},
    )


#: What the session page's buttons do: the API's checkpoint verbs (CA's ClusterSnapshot semantics).
SESSION_ACTIONS = {"fork": sessions.fork, "revert": sessions.revert, "commit": sessions.commit}


@require_POST
def session_action(request: HttpRequest, pk, action: str) -> HttpResponse:
    """Fork / revert / commit a session from its page (logged in only; the pages are read-only)."""
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("dashboard:session", args=[pk]), settings.LOGIN_URL)
    if not request.user.has_perm("simulations.change_simulationsession"):
        raise PermissionDenied(f"{action} needs the operators role")
    verb = SESSION_ACTIONS.get(action)
    if verb is None:
        raise Http404(f"no session action {action!r}")
    try:
        result = verb(pk, sessions.parse_if_match(request.POST.get("revision") or None))
    except SessionError as exc:
        if exc.status == 404:
            raise Http404(exc.error) from None
        _session_error(request, exc)
    else:
        messages.success(
            request, f"{action}: checkpoint depth {result['depth']}, revision {result['revision']}"
        )
    return redirect("dashboard:session", pk=pk)


def _placement_form(session: SimulationSession, data=None) -> PlacementForm:
    return PlacementForm(
        data,
        initial={"revision": session.revision},
        session_nodes=list(session.nodes.values_list("name", flat=True)),
        groups=list(NodeGroup.objects.values_list("name", flat=True)),
    )


def _template_of(name: str) -> dict:
    group = NodeGroup.objects.prefetch_related("profiles__devices").get(name=name)
    return group_template(group)


def _placed_message(body: dict) -> str:
    cards = [
        f"{d['uuid']} {d['usedmem']} MiB, {d['usedcores']}% cores"
        for container in body["containers"]
        for d in container
    ]
    where = f": {'; '.join(cards)}" if cards else " (no device asked)"
    return (
        f"placed {body['namespace']}/{body['name']} on {body['nodeName']}{where}, revision {body['revision']}"
    )


@require_POST
def session_place(request: HttpRequest, pk) -> HttpResponse:
    """Place a pod from the session's page, through the API's ``place_pod`` (its checks and
    answers: a pod HAMi cannot fit is refused with HAMi's reason, nothing changed)."""
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("dashboard:session", args=[pk]), settings.LOGIN_URL)
    if not request.user.has_perm("simulations.change_simulationsession"):
        raise PermissionDenied("placing a pod needs the operators role")
    session = get_object_or_404(SimulationSession, pk=pk)
    form = _placement_form(session, request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
        return redirect("dashboard:session", pk=pk)
    try:
        status, body = sessions.place_pod(pk, form.body(_template_of), form.cleaned_data["revision"])
    except SessionError as exc:
        reason = exc.extra.get("reason")
        messages.error(request, f"{exc.error}{f': {reason}' if reason else ''} (HTTP {exc.status})")
    except NodeGroup.DoesNotExist:
        messages.error(request, "that node group no longer exists")
    else:
        messages.success(request, _placed_message(body) + ("" if status == 201 else " (already placed)"))
    return redirect("dashboard:session", pk=pk)


@dashboard_view
def session_detail(request: HttpRequest, pk) -> HttpResponse:
    session = get_object_or_404(SimulationSession, pk=pk)
    caller = caller_of(request)
    if not (caller.operator or session.owner == caller.identity):  # as _readable_sessions
        raise PermissionDenied(  # the API's answer to the same reader (simulations.sessions)
            f"session {session.pk} belongs to another identity; only its owner or an operator may read it "
            f"(this request is {caller.identity})"
        )
    nodes = list(session.nodes.all())
    node_dicts = [{"name": n.name, "group": n.node_group, "devices": n.devices} for n in nodes]
    context = {
        "session": session,
        "nodes": node_dicts,
        "expired": session.expires_at <= timezone.now(),
        "usage": figures.usage_bars(node_dicts) if any(n["devices"] for n in node_dicts) else None,
        "placements": paginate(request, SessionPlacementTable(session.placements.all()), per_page=50),
        "place_form": _placement_form(session),
        "session_actions": [
            ("fork", "push a checkpoint"),
            ("revert", "restore the last checkpoint exactly and pop it"),
            ("commit", "keep the changes, pop the last checkpoint"),
        ],
    }
    return render(request, "simulations/session.html", context)
