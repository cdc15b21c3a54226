"""What CA does with the expander's answer (``tests/expander/ca_clients.py`` ``ca_takes``, restating
``expander/grpcplugin/grpc_client.go`` at cluster-autoscaler-1.32.1, 1.34.5 and 1.36.1), and why the
docs say the expander chooses among groups but never sizes them: CA takes its own option back by
node group id, whatever ``nodeCount`` or ``debug`` the answer carries."""

from __future__ import annotations

import pytest

from simulations.grpcexpander.protos import expander_pb2 as pb
from tests.expander.ca_clients import NEWEST, RELEASES, answer, ca_takes, encode
from tests.expander.test_grpc_expander import TEMPLATES, groups, pods  # noqa: F401 (fixture)

SENT = [("gpu-a10", 3, []), ("gpu-h100", 2, [])]


def _answer(*options: tuple[str, int]) -> pb.BestOptionsResponse:
    return pb.BestOptionsResponse(
        options=[pb.Option(nodeGroupId=g, nodeCount=n, debug="ours") for g, n in options]
    )


CASES = [
    # (why, answer (None: the call failed), what CA goes on with)
    ("a failed call (error, deadline, no TLS) keeps every option", None, SENT),
    ("an answer without options: no scale-up this loop", _answer(), []),
    ("an answered group is CA's own option, with CA's node count", _answer(("gpu-h100", 9)), SENT[1:]),
    ("an unknown id is skipped", _answer(("gpu-x", 1), ("gpu-a10", 1)), SENT[:1]),
    ("only unknown ids: CA keeps every option", _answer(("gpu-x", 1)), SENT),
]


@pytest.mark.parametrize(("why", "response", "taken"), CASES, ids=[c[0] for c in CASES])
def test_what_ca_goes_on_with(why, response, taken):
    assert ca_takes(SENT, response) == taken, why


@pytest.mark.django_db(transaction=True)  # the server's threads record the call on their own connections
def test_the_expander_chooses_groups_and_ca_keeps_its_own_counts(groups, channel):  # noqa: F811
    """The expander's verdict travels in ``debug`` (what ``manage.py expander_example`` prints); CA
    reads only the id, so the count it adds is the one it sent."""
    sent = [("gpu-a10", 3, pods(2, 40000)), ("gpu-h100", 2, pods(2, 40000))]
    response = answer(channel, encode(NEWEST, sent, TEMPLATES))
    assert [o.nodeGroupId for o in response.options] == ["gpu-h100"]
    assert response.options[0].debug.startswith("kept")
    assert ca_takes(sent, response) == [sent[1]]


def test_ca_1_34_2_and_later_1_34_sends_every_pod_and_template_twice():
    """Why the docs warn that CA 1.34.2 to 1.34.x requests are about twice as large: both forms carry
    the same encoded objects (a message field and a bytes field are the same bytes on the wire)."""
    sent = [("gpu-h100", 2, pods(20, 40000)), ("gpu-a10", 3, pods(20, 40000))]
    size = {str(client): len(encode(client, sent, TEMPLATES)) for client in RELEASES}
    assert 1.9 < size["CA 1.34.5"] / size["CA 1.36.1"] < 2.1
    assert 1.9 < size["CA 1.34.5"] / size["CA 1.32.7"] < 2.1
