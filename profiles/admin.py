"""The operator's admin: groups, profiles with inline device rows, inventories, drift, task runs."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, Q
from django.http import HttpResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from simple_history.admin import SimpleHistoryAdmin

from hami_sim.engine.vendors import default_word

from .drift import devices_from_json
from .models import DeviceProfile, DeviceRow, DriftFinding, NodeGroup, NodeInventory
from .render import render_registration, rows_from_devices
from .services import profile_edit, save_profile, set_rows, sync_snapshot
from .vendors import SPECS

__all__ = ["NodeGroupAdmin", "DeviceProfileAdmin", "NodeInventoryAdmin", "DriftFindingAdmin"]

_OPEN = Q(findings__resolved_at__isnull=True)


def _drift_cell(count: int | None, url: str):
    if not count:
        return format_html('<span style="color:#2e7d32">{}</span>', "none")
    return format_html('<a href="{}" style="color:#c62828;font-weight:bold">{} open</a>', url, count)


def _yes_no_filter(title: str, parameter: str, yes: Q) -> type[admin.SimpleListFilter]:
    """A "yes / no" admin filter with a readable title (Django's EmptyFieldListFilter reads "By profiles:
    Empty / Not empty")."""

    class YesNoFilter(admin.SimpleListFilter):
        parameter_name = parameter

        def lookups(self, request, model_admin):
            return [("yes", "yes"), ("no", "no")]

        def queryset(self, request, queryset):
            if self.value() == "yes":
                return queryset.filter(yes).distinct()
            if self.value() == "no":
                return queryset.exclude(yes).distinct()
            return queryset

    YesNoFilter.title = title
    return YesNoFilter


HasProfileFilter = _yes_no_filter("has a device profile", "has_profile", Q(profiles__isnull=False))
RegisteredFilter = _yes_no_filter("registered by HAMi", "registered", Q(registered_at__isnull=False))


@admin.register(NodeGroup)
class NodeGroupAdmin(SimpleHistoryAdmin):
    list_display = ["name", "provider", "machine_type", "inventory_source", "profile", "nodes", "drift"]
    list_filter = ["provider", "inventory_source", HasProfileFilter]
    search_fields = ["name", "machine_type", "description"]
    readonly_fields = ["created_at", "updated_at", "template_link"]
    fieldsets = [
        (None, {"fields": ["name", "description", "provider", "machine_type", "min_size", "max_size"]}),
        ("Recognising nodes", {"fields": ["match_labels", "inventory_source"]}),
        ("Template node", {"fields": ["labels", "taints", "capacity", "template_link"]}),
        ("Times", {"fields": ["created_at", "updated_at"]}),
    ]

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                open_findings=Count("findings", filter=_OPEN, distinct=True),
                live_nodes=Count("inventories", filter=Q(inventories__gone_at__isnull=True), distinct=True),
            )
            .prefetch_related("profiles__devices")
        )

    @admin.display(description="profile")
    def profile(self, obj: NodeGroup):
        profiles = list(obj.profiles.all())
        if not profiles:
            return format_html('<span style="color:#999">{}</span>', "no profile")
        return format_html_join(
            ", ",
            '<a href="{}">{}</a>',
            (
                (
                    reverse("admin:profiles_deviceprofile_change", args=[p.pk]),
                    "; ".join(str(r) for r in p.devices.all()) or p.vendor,
                )
                for p in profiles
            ),
        )

    @admin.display(description="nodes", ordering="live_nodes")
    def nodes(self, obj: NodeGroup) -> int:
        return obj.live_nodes

    @admin.display(description="drift", ordering="open_findings")
    def drift(self, obj: NodeGroup):
        url = reverse("admin:profiles_driftfinding_changelist") + f"?node_group__id__exact={obj.pk}&open=yes"
        return _drift_cell(obj.open_findings, url)

    @admin.display(description="template node")
    def template_link(self, obj: NodeGroup):
        if not obj.pk:
            return "-"
        url = f"/api/v1/node-groups/{obj.name}/template"
        return format_html('<a href="{}">JSON</a> · <a href="{}?format=kwok">kwok YAML</a>', url, url)


def _open_findings(group_id) -> set[int]:
    return set(
        DriftFinding.objects.filter(node_group_id=group_id, resolved_at__isnull=True).values_list(
            "pk", flat=True
        )
    )


def _vendor_help(only: str | None = None, skip: str | None = None) -> str:
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
        from .vendors import profile_errors

        if any(f.errors for f in self.forms):
            return  # row errors first; rules across rows need valid rows
        vendor = getattr(self.instance, "vendor", "") or default_word()
        rows = sorted((f.cleaned_data for f in live), key=lambda d: d.get("position") or 0)
        problem = profile_errors(
            vendor, [{k: v for k, v in row.items() if k not in ("DELETE", "id", "profile")} for row in rows]
        )
        if problem:
            raise forms.ValidationError(problem)


class DeviceRowInline(admin.TabularInline):
    model = DeviceRow
    form = DeviceRowForm
    formset = DeviceRowInlineFormSet
    extra = 0
    min_num = 1

    class Media:
        css = {"all": ["profiles/device-rows.css"]}


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
            "own": _vendor_help(only=vendor) if vendor else "",
            "others": _vendor_help(skip=vendor),
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


class GoneFilter(admin.SimpleListFilter):
    title = "present"
    parameter_name = "present"

    def lookups(self, request, model_admin):
        return [("yes", "present"), ("no", "gone")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(gone_at__isnull=True)
        if self.value() == "no":
            return queryset.filter(gone_at__isnull=False)
        return queryset


@admin.register(NodeInventory)
class NodeInventoryAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "node_group",
        "device_summary",
        "registered_at",
        "last_seen",
        "stale",
        "present",
        "drift",
    ]
    list_filter = ["node_group", GoneFilter, "stale", RegisteredFilter]
    search_fields = ["name", "uid"]
    list_select_related = ["node_group"]
    actions = ["create_profile_from_inventory"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in NodeInventory._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False  # the cluster sync owns these rows; view only

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(open_findings=Count("findings", filter=_OPEN))

    @admin.display(description="devices")
    def device_summary(self, obj: NodeInventory) -> str:
        if obj.parse_error:
            return obj.parse_error
        rows = rows_from_devices(devices_from_json(obj.devices))
        unhealthy = sum(1 for d in obj.devices if not d.get("health"))
        text = "; ".join(f"{r['quantity']} x {r['type']} {r['devmem']} MiB" for r in rows) or "unregistered"
        return f"{text} ({unhealthy} unhealthy)" if unhealthy else text

    @admin.display(description="present", boolean=True)
    def present(self, obj: NodeInventory) -> bool:
        return obj.gone_at is None

    @admin.display(description="drift", ordering="open_findings")
    def drift(self, obj: NodeInventory):
        url = reverse("admin:profiles_driftfinding_changelist") + f"?inventory__id__exact={obj.pk}&open=yes"
        return _drift_cell(obj.open_findings, url)

    @admin.action(description="Create profile from this node's inventory", permissions=["view"])
    def create_profile_from_inventory(self, request, queryset):
        if not request.user.has_perm("profiles.add_deviceprofile"):
            self.message_user(request, "you may not add device profiles", messages.ERROR)
            return
        for inv in queryset.select_related("node_group"):
            if inv.node_group is None:
                self.message_user(request, f"{inv.name}: belongs to no node group", messages.ERROR)
            elif not inv.devices:
                self.message_user(request, f"{inv.name}: has no parsed registration to copy", messages.ERROR)
            else:
                devices = devices_from_json(inv.devices)
                vendors = list(dict.fromkeys((d.device_vendor or default_word()) for d in devices))
                for vendor in vendors:
                    if vendor not in SPECS:
                        continue
                    if inv.node_group.profiles.filter(vendor=vendor).exists():
                        self.message_user(
                            request,
                            f"{inv.name}: node group {inv.node_group.name} already has a profile"
                            + ("" if vendor == default_word() else f" for {vendor}")
                            + "; edit it",
                            messages.WARNING,
                        )
                        continue
                    rows = rows_from_devices(devices, vendor)
                    for row in rows:  # a profile describes a fresh node: healthy devices
                        row.pop("health", None)
                    profile = DeviceProfile(
                        node_group=inv.node_group, vendor=vendor, notes=f"created from node {inv.name}"
                    )
                    save_profile(profile, rows=rows)
                    self.message_user(
                        request,
                        f"{inv.name}: created the profile of node group {inv.node_group.name}"
                        + ("" if vendor == default_word() else f" for {vendor}"),
                    )


class OpenFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "open"

    def lookups(self, request, model_admin):
        return [("yes", "open"), ("no", "resolved")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(resolved_at__isnull=True)
        if self.value() == "no":
            return queryset.filter(resolved_at__isnull=False)
        return queryset


@admin.register(DriftFinding)
class DriftFindingAdmin(admin.ModelAdmin):
    list_display = [
        "inventory",
        "node_group",
        "kind",
        "field",
        "device",
        "expected",
        "actual",
        "severity",
        "opened_at",
        "resolved_at",
    ]
    list_filter = [OpenFilter, "kind", "severity", "node_group", "field"]
    search_fields = ["inventory__name", "device", "field"]
    list_select_related = ["inventory", "node_group"]
    date_hierarchy = "opened_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
