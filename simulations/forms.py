"""The sessions pages' forms: a new session, as ``POST /api/v1/sessions`` makes one, and a pod placed
in one, as ``POST /api/v1/sessions/<id>/placements`` places it."""

from __future__ import annotations

from django import forms

from hami_sim.pages.podfield import PodField

__all__ = ["SessionCreateForm", "PlacementForm", "EXAMPLE_PLACEMENT_POD"]


class SessionCreateForm(forms.Form):
    """A new simulation session from the sessions page (the API's ``name`` and ``ttlSeconds``)."""

    name = forms.CharField(max_length=200, required=False)
    ttl_seconds = forms.IntegerField(min_value=1, max_value=86400, initial=3600, label="TTL (s)")


#: What the placement form starts with: a pod asking one card's slice, to edit.
EXAMPLE_PLACEMENT_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: train-0
  namespace: ml
spec:
  containers:
  - name: main
    resources:
      limits:
        nvidia.com/gpu: "1"
        nvidia.com/gpumem: "12000"   # MiB of one card (HAMi)
"""


class PlacementForm(forms.Form):
    """A pod placed in the session from its page, as ``POST /api/v1/sessions/<id>/placements`` places
    one: on a node the session holds, or on a node group's template node (the group's profile; its
    first placement adds the node to the session)."""

    pod = PodField(initial=EXAMPLE_PLACEMENT_POD)
    node = forms.ChoiceField(label="on")
    revision = forms.IntegerField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, session_nodes: list[str] = (), groups: list[str] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        held = [(f"node:{name}", name) for name in session_nodes]
        templates = [(f"group:{name}", f"a template node of {name}") for name in groups]
        self.fields["node"].choices = [
            ("Nodes in this session", held),
            ("Node groups", templates),
        ]

    def body(self, template_of) -> dict:
        """The API's placement body; ``template_of(group name)`` gives a group's template Node."""
        kind, name = self.cleaned_data["node"].split(":", 1)
        pod = self.cleaned_data["pod"]
        return {"pod": pod, "nodeName": name} if kind == "node" else {"pod": pod, "node": template_of(name)}
