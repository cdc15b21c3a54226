"""The device profiles' admin: one edit (header and rows) is one profile version.

An admin save, a revert from the history page and every inline row write run as one
``profile_edit``, so drift is re-checked once when it commits; the history entry records why, and
the operator is told which drift findings the edit opened.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from simple_history.admin import SimpleHistoryAdmin

from ..models import DeviceProfile, DriftFinding, NodeGroup
from ..render import render_registration
from ..services import profile_edit, set_rows, sync_snapshot
from ..vendors import SPECS
from .device_rows import DeviceRowInline, vendor_help

__all__ = ["DeviceProfileAdmin", "rows_summary"]


def _open_findings(group_id) -> set[int]:
    return set(
        DriftFinding.objects.filter(node_group_id=group_id, resolved_at__isnull=True).values_list(
            "pk", flat=True
        )
    )


def rows_summary(rows: list[dict]) -> str:
    """Device rows as the changelist shows them ("4 x NVIDIA A10G 23028 MiB; ...")."""
    return (
        "; ".join(f"{r.get('quantity', 1)} x {r.get('type', '?')} {r.get('devmem', '?')} MiB" for r in rows)
        or "-"
    )


@admin.register(DeviceProfile)
class DeviceProfileAdmin(SimpleHistoryAdmin):
    inlines = [DeviceRowInline]
    list_display = ["node_group", "vendor", "devices_summary", "version", "updated_at"]
    list_filter = ["vendor", "node_group__provider", "node_group__inventory_source"]
    search_fields = ["node_group__name", "devices__type", "notes"]
    readonly_fields = [
        "version",
        "device_rows",
        "rendered_annotation",
        "created_at",
        "updated_at",
    ]
    fields = [
        "node_group",
        "vendor",
        "pair_scores",
        "notes",
        "version",
        "device_rows",
        "rendered_annotation",
        "created_at",
        "updated_at",
    ]
    list_select_related = ["node_group"]
    # the vendor's row rules go below the rows (templates/admin/profiles/deviceprofile/change_form.html)
    change_form_template = "admin/profiles/deviceprofile/change_form.html"

    @staticmethod
    def vendor_rules(vendor: str | None) -> dict:
        """This profile's vendor's row rules in full, every other vendor's folded away."""
        vendor = vendor if vendor in SPECS else None
        return {
            "vendor": vendor or "",
            "own": vendor_help(only=vendor) if vendor else "",
            "others": vendor_help(skip=vendor),
        }

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("devices")

    @admin.display(description="devices")
    def devices_summary(self, obj: DeviceProfile) -> str:
        return "; ".join(str(r) for r in obj.devices.all())

    def set_history_delta_changes(self, request, historical_records, foreign_keys_are_objs=True):
        """simple-history's changes, plus the rows and the version: they are not editable form fields,
        so simple-history leaves them out and an edit of the rows alone showed an empty "Changes"."""
        super().set_history_delta_changes(request, historical_records, foreign_keys_are_objs)
        records = list(historical_records)
        for newer, older in zip(records, records[1:], strict=False):
            changes = list(getattr(newer, "history_delta_changes", []))
            for name, label, show in (
                ("devices_snapshot", "Devices", rows_summary),
                ("version", "Version", str),
            ):
                old, new = getattr(older, name), getattr(newer, name)
                if old != new:
                    changes.append({"field": label, "old": show(old), "new": show(new)})
            newer.history_delta_changes = changes

    @admin.display(description="device rows (on a revert form: the rows the revert restores)")
    def device_rows(self, obj: DeviceProfile) -> str:
        return rows_summary(list(obj.devices_snapshot or []) or (obj.rows_data() if obj.pk else []))

    @admin.display(description="rendered hami.io/node-nvidia-register (or the vendor's registration)")
    def rendered_annotation(self, obj: DeviceProfile):
        # The rows this object holds: on a history entry's revert form that entry's snapshot (what a
        # revert restores), not the current rows; a stored profile's snapshot equals its rows.
        rows = list(obj.devices_snapshot or []) or (obj.rows_data() if obj.pk else [])
        if not rows:
            return "-"
        group = obj.node_group
        reg = render_registration(
            group.name, obj.vendor, rows, obj.pair_scores, instance_type=group.machine_type
        )
        items = list(reg.annotations.items())
        items += [(f"status.capacity[{k}]", v) for k, v in reg.capacity.items()]
        items += [(f"label {k}", v) for k, v in reg.labels.items()]
        return format_html_join("", "<p><b>{}</b></p><pre style='white-space:pre-wrap'>{}</pre>", items)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        vendor = request.POST.get("vendor") or request.GET.get("vendor")
        if object_id and not vendor:
            vendor = DeviceProfile.objects.filter(pk=object_id).values_list("vendor", flat=True).first()
        extra_context = {**(extra_context or {}), "vendor_rules": self.vendor_rules(vendor)}
        return self._edit(
            request,
            object_id,
            "edited in the admin",
            # the header save and every inline row write are one version
            lambda: super(DeviceProfileAdmin, self).changeform_view(
                request, object_id, form_url, extra_context
            ),
        )

    def _edit(self, request, object_id, reason: str, view) -> HttpResponse:
        """Run one admin edit as one profile edit; after a save, record why in the history entry it
        wrote and name the drift findings it opened (drift is re-checked when the edit commits)."""
        group_id = request.POST.get("node_group") or (
            DeviceProfile.objects.filter(pk=object_id).values_list("node_group_id", flat=True).first()
            if object_id
            else None
        )
        saving = request.method == "POST" and bool(group_id)
        before = _open_findings(group_id) if saving else set()
        started = timezone.now()
        with profile_edit():
            response = view()
        if not saving or response.status_code != 302:
            return response
        DeviceProfile.history.filter(
            node_group_id=group_id, history_date__gte=started, history_change_reason__isnull=True
        ).update(history_change_reason=reason)
        opened = _open_findings(group_id) - before
        if opened:
            group = NodeGroup.objects.get(pk=group_id)
            url = (
                reverse("admin:profiles_driftfinding_changelist")
                + f"?node_group__id__exact={group.pk}&open=yes"
            )
            n = len(opened)
            self.message_user(
                request,
                format_html(
                    'This edit opened {} drift finding{} on {}: its live nodes no longer match the profile. <a href="{}">See them</a>.',
                    n,
                    "" if n == 1 else "s",
                    group.name,
                    url,
                ),
                messages.WARNING,
            )
        return response

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        sync_snapshot(form.instance)  # a history entry that holds the rows, for revert

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        request._profile_revert = True
        restored = DeviceProfile.history.filter(history_id=version_id).first()
        reason = f"reverted to version {restored.version}" if restored is not None else "reverted"
        # a revert restores header and rows: one new version
        return self._edit(
            request,
            object_id,
            reason,
            lambda: super(DeviceProfileAdmin, self).history_form_view(
                request, object_id, version_id, extra_context
            ),
        )

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if getattr(request, "_profile_revert", False) and obj.devices_snapshot:
            # Reverting restores the device rows recorded with that history entry, not just the header.
            set_rows(obj, [dict(row) for row in obj.devices_snapshot])
