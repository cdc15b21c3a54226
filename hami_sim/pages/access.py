"""Who may see the dashboard: logged-in users, or anyone when ``DEMO_READ_ONLY`` opens it read-only."""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login

__all__ = ["dashboard_view"]


def dashboard_view(view):
    """Login required unless ``DEMO_READ_ONLY``; the pages never write, so read-only is all they need."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated and not settings.DEMO_READ_ONLY:
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        return view(request, *args, **kwargs)

    return wrapper
