"""A fixed 4 KB JSON endpoint, mounted only with ``HAMI_SIM_BENCH_ENDPOINT=1``: the floor that
``bench/filter_bench.py`` compares /filter-simulation against on the same server."""

from django.http import HttpRequest, HttpResponse

_PAYLOAD = (
    b'{"items":[' + b",".join(b'{"name":"node-%04d","score":%d}' % (i, i % 11) for i in range(135)) + b"]}"
)[:4096]
FIXED_4K = _PAYLOAD if len(_PAYLOAD) == 4096 else _PAYLOAD.ljust(4096)


def fixed_4k(request: HttpRequest) -> HttpResponse:
    return HttpResponse(FIXED_4K, content_type="application/json")
