"""The what-if form: a pod (YAML or JSON), how many replicas, which node groups."""

from __future__ import annotations

import yaml
from django import forms

from hami_sim.project import safeyaml
from profiles.models import NodeGroup

__all__ = ["WhatIfForm", "EXAMPLE_POD"]

#: What the what-if form starts with: a realistic pod a new user can estimate at once and then edit.
EXAMPLE_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: inference-example
  namespace: ml
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: server
    image: vllm/vllm-openai
    resources:
      requests: {cpu: "8", memory: 32Gi}
      limits:
        nvidia.com/gpu: "1"
        nvidia.com/gpumem: "20000"   # MiB of one card (HAMi)
        nvidia.com/gpucores: "30"    # % of that card's cores (HAMi)
"""

EXPANDERS = [
    ("least-waste", "least-waste"),
    ("most-pods", "most-pods"),
    ("least-nodes", "least-nodes"),
    ("grpc,least-waste", "grpc,least-waste (CA with hami-sim's gRPC expander)"),
]


def yaml_problem(exc: yaml.YAMLError) -> str:
    """Where the text breaks and why, as a person reads it: "line 4, column 9: <problem>" (1-based)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return str(problem)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"


class WhatIfForm(forms.Form):
    pod = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 16, "cols": 70, "spellcheck": "false"}),
        max_length=256 * 1024,  # bounds the parse work (libyaml, hami_sim.project.safeyaml)
        help_text="A Pod as YAML or JSON (kubectl get pod -o yaml works).",
        initial=EXAMPLE_POD,
    )
    count = forms.IntegerField(min_value=1, max_value=10000, initial=3, help_text="replicas")
    groups = forms.ModelMultipleChoiceField(
        queryset=NodeGroup.objects.all(),
        to_field_name="name",
        widget=forms.CheckboxSelectMultiple,
        required=True,
    )
    expander = forms.ChoiceField(choices=EXPANDERS, initial="least-waste")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:  # a fresh form compares every group; the user unticks the ones to leave out
            self.fields["groups"].initial = list(NodeGroup.objects.values_list("name", flat=True))

    def clean_pod(self) -> dict:
        text = self.cleaned_data["pod"]
        try:
            data = safeyaml.load(text)  # JSON is YAML; no aliases, bounded depth
        except yaml.YAMLError as exc:
            raise forms.ValidationError(f"not YAML or JSON: {yaml_problem(exc)}") from None
        if not isinstance(data, dict):
            raise forms.ValidationError("expected a Pod object")
        if data.get("kind", "Pod") != "Pod":
            raise forms.ValidationError(f"expected kind Pod, got {data.get('kind')!r}")
        if not isinstance(data.get("spec"), dict):
            raise forms.ValidationError("the pod has no spec")
        containers = data["spec"].get("containers")
        if not isinstance(containers, list):
            raise forms.ValidationError("spec.containers must be an array of containers")
        if not containers:
            # Kubernetes refuses such a pod, so CA never sees one: no estimate to give
            raise forms.ValidationError(
                "spec.containers must list at least one container (Kubernetes requires one)"
            )
        if not all(isinstance(c, dict) for c in containers):
            raise forms.ValidationError("every entry of spec.containers must be a container object")
        return data
