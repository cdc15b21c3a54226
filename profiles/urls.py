"""REST routes of the profiles app (node groups, profiles, inventories, drift)."""

urlpatterns: list = []
