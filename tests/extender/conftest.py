"""The extender's live-usage tests read a cluster through the loopback API double, as the usage tests do."""

from tests.usage.conftest import kube_api, source  # noqa: F401 (fixtures, used by name)
