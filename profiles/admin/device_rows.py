"""The device rows of a profile as the admin edits them: a compact inline, checked as a whole.

Each row is validated by its model; the rules across rows (a vendor's fixed values, what one node
may hold) are the vendor's (``profiles.vendors.profile_errors``), checked once every row is valid,
so an operator sees the row errors first.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin

from hami_sim.engine.vendors import default_word

from ..models import DeviceRow
from ..vendors import SPECS

__all__ = ["DeviceRowForm", "DeviceRowInlineFormSet", "DeviceRowInline", "vendor_help"]


def vendor_help(only: str | None = None, skip: str | None = None) -> str:
    """Per-vendor row rules for the admin: what each vendor registers and which extras it takes."""
    lines = []
    for word, spec in SPECS.items():
        if (only is not None and word != only) or word == skip:
            continue
        fixed = ", ".join(f"{k}={v}" for k, v in spec.fixed.items())
        extras = ", ".join(f"extra.{k}: {h}" for k, h in spec.extras.items())
        lines.append(
            f"{word}: {spec.help}"
            + (f" [fixed: {fixed}]" if fixed else "")
            + (f" [{extras}]" if extras else "")
        )
    return "\n".join(lines)


class DeviceRowForm(forms.ModelForm):
    class Meta:
        model = DeviceRow
        fields = [
            "position",
            "type",
            "quantity",
            "devmem",
            "devcore",
            "count",
            "numa",
            "mode",
            "health",
            "mig_profiles",
            "extra",
        ]
        # narrow inputs: all eleven columns fit a 1400 px window (the admin's defaults made it 2,269 px)
        widgets = {
            "type": forms.TextInput(attrs={"style": "width: 10em"}),
            "mode": forms.TextInput(attrs={"style": "width: 6em"}),
            "mig_profiles": forms.Textarea(attrs={"rows": 1, "style": "width: 8em"}),
            "extra": forms.Textarea(attrs={"rows": 1, "style": "width: 7em"}),
            **{
                name: forms.NumberInput(attrs={"style": f"width: {em}em"})
                for name, em in (
                    ("position", 3.5),
                    ("quantity", 3.5),
                    ("devmem", 5.5),
                    ("devcore", 4),
                    ("count", 4),
                    ("numa", 3.5),
                )
            },
        }

    def clean_extra(self):
        return self.cleaned_data.get("extra") or {}


class DeviceRowInlineFormSet(forms.BaseInlineFormSet):
    def clean(self) -> None:
        super().clean()
        live = [f for f in self.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]
        if not live:
            raise forms.ValidationError("a device profile needs at least one device row")
        if any(f.errors for f in self.forms):
            return  # row errors first; rules across rows need valid rows
        problem = self._rules_problem(live)
        if problem:
            raise forms.ValidationError(problem)

    def _rules_problem(self, live: list) -> str:
        """What breaks the vendor's rules across the rows (in position order); '' when they hold."""
        from ..vendors import profile_errors

        vendor = getattr(self.instance, "vendor", "") or default_word()
        rows = sorted((f.cleaned_data for f in live), key=lambda d: d.get("position") or 0)
        return profile_errors(
            vendor, [{k: v for k, v in row.items() if k not in ("DELETE", "id", "profile")} for row in rows]
        )


class DeviceRowInline(admin.TabularInline):
    model = DeviceRow
    form = DeviceRowForm
    formset = DeviceRowInlineFormSet
    extra = 0
    min_num = 1

    class Media:
        css = {"all": ["profiles/device-rows.css"]}
