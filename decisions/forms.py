"""The what-if form: a pod (YAML or JSON), how many replicas, which node groups."""

from __future__ import annotations

from django import forms

from hami_sim.pages.podfield import PodField
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


class WhatIfForm(forms.Form):
    pod = PodField(initial=EXAMPLE_POD)
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
