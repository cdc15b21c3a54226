"""The short version of ``bench/load_bench.py`` (both drive ``tests/loadgen.py``): concurrent clients
against the production server.

8 keep-alive clients x 200 requests on loopback against gunicorn (2 workers x 4 threads): every
answer is a 200 and byte-identical to the reference answer for its request. No timing assertions
(the figures are printed by the bench).
"""

from __future__ import annotations

import orjson
import pytest

from tests.loadgen import reference_answers, request_mix, run_load, server_rss_kib, start

pytestmark = [pytest.mark.slow]


def test_concurrent_clients_get_correct_answers_and_no_errors(child_database_url):
    proc, url, cleanup = start(child_database_url, workers=2, threads=4)
    try:
        mix = request_mix()
        expected = reference_answers(url, mix)
        # the reference answers are real verdicts: the mix has fits, failures and an unregistered node
        small, too_big = orjson.loads(expected[0]), orjson.loads(expected[6])
        assert len(small["Nodes"]["items"]) == 3
        assert small["FailedAndUnresolvableNodes"] == {"template-node-for-cold": "node unregistered"}
        assert too_big["Nodes"] is None and len(too_big["FailedNodes"]) == 3
        result = run_load(url, mix, expected, clients=8, requests_per_client=200)
        print(result.summary())
        assert result.requests == 8 * 200
        assert result.server_errors == 0, result.samples
        assert result.non_200 == 0, result.samples
        assert result.errors == 0, result.samples
        # the server is still up and answering after the burst
        assert reference_answers(url, mix) == expected
        assert proc.poll() is None
        assert server_rss_kib(proc.pid)
    finally:
        cleanup()
