"""factory-boy factories, one per model the tests write: the only place a test builds a database row.

Each factory makes a valid row from nothing (``NodeGroupFactory()``) and takes any field by name
(``DecisionFactory(verdict="no_fit", node_groups=["gpu-t4"])``). Profiles are saved through
``profiles.services.save_profile``, as the admin and the API save them (one version, one history
entry, the rows snapshot), so a test sees what a user's edit would leave behind.
"""

from __future__ import annotations

from datetime import timedelta

import factory
from django.utils import timezone
from factory.django import DjangoModelFactory, Password

__all__ = [
    "A10G",
    "AutoscalerStatusFactory",
    "CAEventFactory",
    "H100",
    "DecisionFactory",
    "DeviceProfileFactory",
    "GroupFactory",
    "NodeGroupFactory",
    "NodeInventoryFactory",
    "NodeUsageFactory",
    "PodAllocationFactory",
    "SessionFactory",
    "TaskRunFactory",
    "TokenFactory",
    "UsageStateFactory",
    "UserFactory",
]

#: a device row of an NVIDIA A10G card (what most group tests put in a profile)
A10G = {
    "type": "NVIDIA A10G",
    "devmem": 23028,
    "devcore": 100,
    "count": 10,
    "numa": 0,
    "mode": "hami-core",
    "mig_profiles": [],
}
#: and of an NVIDIA H100 (80 GB HBM3)
H100 = {**A10G, "type": "NVIDIA H100 80GB HBM3", "devmem": 81559}


class NodeGroupFactory(DjangoModelFactory):
    """A CA node group matched by its EKS label; ``rows=[...]`` also gives it a device profile
    (``rows__vendor="AMD"`` for another vendor's)."""

    class Meta:
        model = "profiles.NodeGroup"
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"gpu-{n}")
    match_labels = factory.LazyAttribute(lambda group: {"eks.amazonaws.com/nodegroup": group.name})

    @factory.post_generation
    def rows(group, create: bool, extracted: list[dict] | None, **profile_fields) -> None:  # noqa: N805
        if extracted is not None:
            DeviceProfileFactory(node_group=group, rows=extracted, **profile_fields)


class DeviceProfileFactory(DjangoModelFactory):
    """A group's device profile; ``rows`` are device rows (``quantity`` 1 unless given), in order."""

    class Meta:
        model = "profiles.DeviceProfile"

    node_group = factory.SubFactory(NodeGroupFactory)
    vendor = "NVIDIA"
    rows = factory.LazyFunction(lambda: [dict(A10G)])

    @classmethod
    def _create(cls, model_class, *args, rows: list[dict] | None = None, **fields):
        from profiles.services import save_profile

        complete = None if rows is None else [{"quantity": 1, **row} for row in rows]
        return save_profile(model_class(*args, **fields), rows=complete)


class NodeInventoryFactory(DjangoModelFactory):
    """A node as the inventory sync stored it, seen now."""

    class Meta:
        model = "profiles.NodeInventory"

    name = factory.Sequence(lambda n: f"ip-10-0-0-{n}")
    first_seen = factory.LazyFunction(timezone.now)
    last_seen = factory.SelfAttribute("first_seen")


class NodeUsageFactory(DjangoModelFactory):
    """A live node's per-device usage, confirmed now."""

    class Meta:
        model = "usage.NodeUsage"

    name = factory.Sequence(lambda n: f"ip-10-0-1-{n}")
    observed_at = factory.LazyFunction(timezone.now)
    changed_at = factory.SelfAttribute("observed_at")
    version = 1


class PodAllocationFactory(DjangoModelFactory):
    """A pod HAMi counts on ``node``; ``devices`` rows are ``[vendor, uuid, type, usedmem, usedcores, slots]``."""

    class Meta:
        model = "usage.PodAllocation"

    uid = factory.Sequence(lambda n: f"uid-pod-{n}")
    namespace = "ml"
    name = factory.Sequence(lambda n: f"pod-{n}")
    node = "ip-10-0-1-0"
    observed_at = factory.LazyFunction(timezone.now)


class UsageStateFactory(DjangoModelFactory):
    """The usage store's one state row (pk 1), confirmed now: made, or updated with the fields given
    (a sync or the watcher may have written it already)."""

    class Meta:
        model = "usage.UsageState"

    generation = 1
    confirmed_at = factory.LazyFunction(timezone.now)
    source = "test"

    @classmethod
    def _create(cls, model_class, *args, **fields):
        row, _ = model_class.objects.update_or_create(pk=1, defaults=fields)
        return row


class DecisionFactory(DjangoModelFactory):
    """One recorded extender answer: a fit of pod ``ml/pod-N`` on group ``gpu-a10``, seen now."""

    class Meta:
        model = "decisions.Decision"

    digest = factory.Sequence(lambda n: f"d{n}")
    pod_uid = factory.Sequence(lambda n: f"uid-{n}")
    pod_namespace = "ml"
    pod_name = factory.Sequence(lambda n: f"pod-{n}")
    verdict = "fit"
    node_groups = factory.LazyFunction(lambda: ["gpu-a10"])
    first_seen = factory.LazyFunction(timezone.now)
    last_seen = factory.SelfAttribute("first_seen")


class CAEventFactory(DjangoModelFactory):
    """A Kubernetes Event the cluster autoscaler (or the scheduler) reported about a pod."""

    class Meta:
        model = "decisions.CAEvent"

    event_uid = factory.Sequence(lambda n: f"event-{n}")
    reason = "TriggeredScaleUp"
    pod_namespace = "ml"
    pod_name = factory.Sequence(lambda n: f"pod-{n}")
    message = "m"


class AutoscalerStatusFactory(DjangoModelFactory):
    """One read of CA's ``cluster-autoscaler-status`` ConfigMap, fetched now; ``parsed`` is its YAML."""

    class Meta:
        model = "decisions.AutoscalerStatus"

    fetched_at = factory.LazyFunction(timezone.now)
    raw = "x"
    parsed = factory.LazyFunction(dict)
    digest = factory.Sequence(lambda n: f"status-{n}")


class TaskRunFactory(DjangoModelFactory):
    """A background task's run, started now and still running unless ``outcome`` says otherwise."""

    class Meta:
        model = "runtime.TaskRun"

    task = "sync_cluster_inventory"
    started_at = factory.LazyFunction(timezone.now)


class SessionFactory(DjangoModelFactory):
    """A simulation session that lives an hour."""

    class Meta:
        model = "simulations.SimulationSession"

    name = factory.Sequence(lambda n: f"session-{n}")
    expires_at = factory.LazyFunction(lambda: timezone.now() + timedelta(hours=1))


class GroupFactory(DjangoModelFactory):
    """A role: a Django group holding ``permissions`` (Permission rows) when given."""

    class Meta:
        model = "auth.Group"
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"role-{n}")

    @factory.post_generation
    def permissions(group, create: bool, extracted, **_) -> None:  # noqa: N805
        if extracted:
            group.permissions.add(*extracted)


class UserFactory(DjangoModelFactory):
    """A user with a usable password (``pw-<username>`` unless given) and ``roles``: the names of
    the groups it belongs to (``roles=["operators"]``: the operators role its migration makes).
    ``is_staff=True`` may open the dashboard; ``superuser=True`` may do anything."""

    class Meta:
        model = "auth.User"
        skip_postgeneration_save = True

    class Params:
        superuser = factory.Trait(is_staff=True, is_superuser=True)  # UserFactory(superuser=True)

    username = factory.Sequence(lambda n: f"user-{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.invalid")
    password = Password(factory.LazyAttribute(lambda user: f"pw-{user.username}"))

    @factory.post_generation
    def roles(user, create: bool, extracted: list[str] | None, **_) -> None:  # noqa: N805
        from django.contrib.auth.models import Group

        from tests.roles import operators_group

        for role in extracted or ():
            user.groups.add(operators_group() if role == "operators" else Group.objects.get(name=role))


class TokenFactory(DjangoModelFactory):
    """An API token (what GitOps automation sends), for an operator unless ``user`` is given."""

    class Meta:
        model = "authtoken.Token"
        django_get_or_create = ("user",)  # one token per user: asking again returns it

    user = factory.SubFactory(UserFactory, roles=["operators"])
