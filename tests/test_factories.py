"""Every factory in ``tests/factories/models.py`` makes a row the model accepts, twice over (no
unique field collides), so a test that asks for "a decision" or "an operator" gets a valid one."""

from __future__ import annotations

import pytest

from tests.factories import models as factories

pytestmark = [pytest.mark.django_db]

#: models with one row only: their factory makes it, then updates it
_SINGLETONS = {factories.UsageStateFactory}
_ALL = [
    getattr(factories, name)
    for name in factories.__all__
    if name.endswith("Factory") and getattr(factories, name) not in _SINGLETONS
]


@pytest.mark.parametrize("factory", _ALL, ids=[f.__name__ for f in _ALL])
def test_a_factory_makes_valid_distinct_rows(factory):
    first, second = factory(), factory()
    for row in (first, second):
        row.full_clean(exclude=_at_model_default(row))
    assert first.pk != second.pk


def test_the_usage_state_factory_makes_the_one_row_then_updates_it():
    first = factories.UsageStateFactory(generation=3)
    second = factories.UsageStateFactory(source="watch")
    first.full_clean()
    assert (second.pk, second.generation, second.source) == (first.pk, 1, "watch")
    assert type(second).objects.count() == 1


def _at_model_default(row) -> list[str]:
    """Fields left at the model's own default (``[]`` for a JSON list the model declares non-blank):
    valid by the model's definition, which ``full_clean`` does not know."""
    return [
        f.name
        for f in row._meta.concrete_fields
        if f.has_default() and getattr(row, f.attname) == f.get_default()
    ]


def test_a_group_with_rows_gets_one_profile_saved_as_an_edit_saves_it():
    group = factories.NodeGroupFactory(rows=[{**factories.A10G, "quantity": 4}], rows__vendor="NVIDIA")
    profile = group.profiles.get()
    assert [(d.type, d.quantity) for d in profile.devices.all()] == [("NVIDIA A10G", 4)]
    assert profile.version == 1 and profile.history.count() == 1  # one version, one history entry


@pytest.mark.parametrize(
    ("fields", "staff", "superuser", "operator"),
    [
        ({}, False, False, False),
        ({"is_staff": True}, True, False, False),
        ({"roles": ["operators"]}, False, False, True),
        ({"superuser": True}, True, True, False),
    ],
)
def test_users_get_their_roles_and_a_password_that_logs_in(client, fields, staff, superuser, operator):
    user = factories.UserFactory(username="someone", **fields)
    assert (user.is_staff, user.is_superuser) == (staff, superuser)
    assert user.groups.filter(name="operators").exists() == operator
    assert client.login(username="someone", password="pw-someone")
