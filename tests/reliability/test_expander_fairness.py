"""No client can switch the gRPC expander off for CA, and every refusal is counted and logged.

Two anonymous clients that send their requests slowly held both call slots, so CA's calls were
refused RESOURCE_EXHAUSTED (and CA kept every option) for as long as they kept sending. Now a call
must deliver its request within ``EXPANDER_RECEIVE_SECONDS``, a work slot is taken only once the
request is whole, and no peer address holds all the slots or more than its share of calls. The slow
clients are raw HTTP/2 sockets bound to other loopback addresses (other peers); CA is a real grpcio
client on TLS, as it dials (``tests/expander/ca_clients.py``).
"""

# ruff: noqa: F811 -- the expander fixtures (serve, connect, tls_files) are imported from its conftest
from __future__ import annotations

import contextlib
import logging
import threading

import grpc
import pytest
from prometheus_client import REGISTRY

from simulations.grpcexpander.admission import REASONS
from tests.expander.ca_clients import best_options
from tests.expander.conftest import connect, serve, tls_files  # noqa: F401 (fixtures)
from tests.factories.models import NodeGroupFactory
from tests.profiles.conftest import A10, H100
from tests.reliability.slowgrpc import SlowCall
from tests.reliability.test_expander_limits import big_request
from tests.waiting import eventually

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

MiB = 1 << 20


@pytest.fixture
def groups(db):
    NodeGroupFactory(name="gpu-a10", rows=[{**A10, "quantity": 4}])
    NodeGroupFactory(name="gpu-h100", rows=[{**H100, "quantity": 8}])


def refused(reason: str) -> float:
    return REGISTRY.get_sample_value("hami_sim_expander_refused_total", {"reason": reason}) or 0.0


def in_progress() -> float:
    return REGISTRY.get_sample_value("hami_sim_expander_calls") or 0.0


def answered() -> float:
    return sum(
        REGISTRY.get_sample_value("hami_sim_expander_requests_total", {"wire": wire}) or 0.0
        for wire in ("objects", "both", "bytes")
    )


@pytest.fixture
def slow_calls(tls_files):
    """Open slow calls from a loopback address; every one is closed after the test."""
    opened: list[SlowCall] = []

    def open_call(port: int, source: str, request: bytes, sent: int = 16) -> SlowCall:
        opened.append(SlowCall(port, tls_files[2], source=source).start(request, sent=sent))
        return opened[-1]

    yield open_call
    for call in opened:
        call.close()


def refusal_logged(caplog, reason: str) -> bool:
    return any(
        f"refused ({reason})" in r.getMessage() for r in caplog.records if r.name == "hami_sim.expander"
    )


def test_two_slow_senders_do_not_keep_ca_out(groups, serve, connect, slow_calls, caplog):
    """The finding: two anonymous clients trickling their requests in; CA's calls are answered all
    the while (before the fix: RESOURCE_EXHAUSTED for as long as they kept sending)."""
    caplog.set_level(logging.WARNING, logger="hami_sim.expander")
    port = serve(workers=2)
    request = big_request(64 * 1024)
    before = in_progress()
    slow = [slow_calls(port, f"127.0.0.{n}", request) for n in (2, 3)]
    assert eventually(lambda: in_progress() == before + 2)  # both admitted, still receiving
    channel = connect(port)
    for _ in range(3):
        assert isinstance(best_options(channel, request), list)  # an answer, not RESOURCE_EXHAUSTED
        for call in slow:
            call.send_some(8)
    assert not any(call.ended.is_set() for call in slow)  # still sending, and CA was answered


def test_a_slow_sender_is_cut_off_at_the_receive_deadline(groups, serve, slow_calls, settings, caplog):
    caplog.set_level(logging.WARNING, logger="hami_sim.expander")
    settings.EXPANDER_RECEIVE_SECONDS = 0.5
    port = serve()
    before = refused("receive_timeout")
    call = slow_calls(port, "127.0.0.2", big_request(64 * 1024))
    assert call.ended.wait(30), "the server never ended the slow call"
    assert eventually(lambda: refused("receive_timeout") == before + 1)
    assert refusal_logged(caplog, "receive_timeout")


def test_one_peer_never_holds_every_work_slot(groups, serve, connect, slow_calls, caplog, first_call_held):
    """With two work slots, a peer with one call in work (held there until the checks are done) is
    refused a second (``busy``) while the other slot stays free for another peer, which is answered."""
    caplog.set_level(logging.WARNING, logger="hami_sim.expander")
    entered, release = first_call_held
    port = serve(workers=2)
    channel = connect(port)
    heavy = big_request(4 * MiB, distinct=True)
    worker = threading.Thread(target=lambda: _ignore_errors(best_options, channel, heavy, timeout=60))
    worker.start()
    try:
        assert entered.wait(60), "the first call never started"
        busy, done = refused("busy"), answered()
        with pytest.raises(grpc.RpcError) as err:
            best_options(channel, big_request(64 * 1024))  # the same peer: refused at once
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refused("busy") == busy + 1 and refusal_logged(caplog, "busy")
        # another peer's call, its whole request sent at once (as fast as the server's HTTP/2
        # windows let it): answered, not refused busy
        request = big_request(32 * 1024)
        other = slow_calls(port, "127.0.0.2", request, sent=len(request))
        assert other.ended.wait(30), "the other peer's call never ended"
        assert eventually(lambda: answered() == done + 1)
        assert refused("busy") == busy + 1
    finally:
        release.set()
        worker.join(120)


def _ignore_errors(call, *args, **kwargs) -> None:
    with contextlib.suppress(grpc.RpcError):
        call(*args, **kwargs)


def test_a_peer_has_at_most_its_share_of_calls(groups, serve, connect, slow_calls, caplog):
    """One address opening calls beyond ``EXPANDER_MAX_CONCURRENT`` is refused (``peer_calls``);
    CA, another address, is still answered."""
    caplog.set_level(logging.WARNING, logger="hami_sim.expander")
    port = serve(workers=2)
    request = big_request(64 * 1024)
    before = refused("peer_calls")
    calls = [slow_calls(port, "127.0.0.2", request) for _ in range(3)]
    assert eventually(lambda: refused("peer_calls") == before + 1)
    assert eventually(lambda: sum(call.ended.is_set() for call in calls) == 1)  # the third, ended at once
    assert refusal_logged(caplog, "peer_calls")
    assert best_options(connect(port), request)


def test_calls_beyond_what_the_process_admits_are_counted(groups, serve, connect, slow_calls, caplog):
    """``4 x EXPANDER_MAX_CONCURRENT`` calls in progress at most: with one slot, four slow peers
    fill it, and the next call is refused ``calls`` (the NetworkPolicy admits only CA's pods, so in a
    cluster these peers cannot reach the port; docs/cluster-autoscaler.md)."""
    caplog.set_level(logging.WARNING, logger="hami_sim.expander")
    port = serve(workers=1)
    request = big_request(64 * 1024)
    before, calls = refused("calls"), in_progress()
    for n in range(2, 6):
        slow_calls(port, f"127.0.0.{n}", request)
    assert eventually(lambda: in_progress() == calls + 4)  # all four admitted, still receiving
    with pytest.raises(grpc.RpcError) as err:
        best_options(connect(port), request)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refused("calls") == before + 1 and refusal_logged(caplog, "calls")


def test_a_request_over_the_byte_bound_is_counted_and_logged(serve, connect, caplog):
    """grpc refuses it before our handler reads a byte; the refusal is still counted (``too_large``)."""
    caplog.set_level(logging.WARNING, logger="hami_sim.expander")
    channel = connect(serve(max_request_bytes=1 * MiB))
    before = refused("too_large")
    with pytest.raises(grpc.RpcError) as err:
        best_options(channel, big_request(2 * MiB))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert eventually(lambda: refused("too_large") == before + 1)
    assert refusal_logged(caplog, "too_large")


def test_every_reason_is_documented():
    """Each reason the counter can carry is named in docs/cluster-autoscaler.md."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs/cluster-autoscaler.md").read_text()
    assert [reason for reason in REASONS if f"`{reason}`" not in text] == []
