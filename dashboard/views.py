"""Dashboard pages (see dashboard issue); the overview is a placeholder until then."""

from django.http import HttpRequest, HttpResponse


def overview(request: HttpRequest) -> HttpResponse:
    return HttpResponse(
        "<h1>hami-sim</h1><p><a href='/api/docs/'>API docs</a> · <a href='/admin/'>admin</a></p>"
    )
