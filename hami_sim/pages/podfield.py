"""A form field holding a Pod as YAML or JSON (``kubectl get pod -o yaml`` works), checked the way
Kubernetes would refuse it: the what-if form and the session page's placement form share it."""

from __future__ import annotations

import yaml
from django import forms

from hami_sim.project import safeyaml

__all__ = ["PodField", "yaml_problem"]


def yaml_problem(exc: yaml.YAMLError) -> str:
    """Where the text breaks and why, as a person reads it: "line 4, column 9: <problem>" (1-based)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if mark is None:
        return str(problem)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"


def _check_pod(data: object) -> dict:
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
        # Kubernetes refuses such a pod, so CA never sees one: nothing to simulate
        raise forms.ValidationError(
            "spec.containers must list at least one container (Kubernetes requires one)"
        )
    if not all(isinstance(c, dict) for c in containers):
        raise forms.ValidationError("every entry of spec.containers must be a container object")
    return data


class PodField(forms.CharField):
    """A textarea whose cleaned value is the Pod as a dict; a clear error for bad YAML or a non-Pod."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 16, "cols": 70, "spellcheck": "false"}))
        kwargs.setdefault(
            "max_length", 256 * 1024
        )  # bounds the parse work (libyaml, hami_sim.project.safeyaml)
        kwargs.setdefault("help_text", "A Pod as YAML or JSON (kubectl get pod -o yaml works).")
        super().__init__(**kwargs)

    def clean(self, value: object) -> dict:  # type: ignore[override]
        text = super().clean(value)
        try:
            data = safeyaml.load(text)  # JSON is YAML; no aliases, bounded depth
        except yaml.YAMLError as exc:
            raise forms.ValidationError(f"not YAML or JSON: {yaml_problem(exc)}") from None
        return _check_pod(data)
