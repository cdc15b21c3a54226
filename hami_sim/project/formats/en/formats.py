"""The one date format of every page and the admin: ISO-like, 24 h, with the time zone's name.

``FORMAT_MODULE_PATH`` points here, so Django's ``DATETIME_FORMAT`` (the admin, ``{{ value }}``,
``|date:"DATETIME_FORMAT"``) and ``SHORT_DATETIME_FORMAT`` (django-tables2's ``DateTimeColumn``) both
read ``2026-12-01 23:38:08 UTC``. Times are shown in ``TIME_ZONE`` (UTC unless configured).
"""

DATETIME_FORMAT = "Y-m-d H:i:s T"
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = DATE_FORMAT
TIME_FORMAT = "H:i:s"
