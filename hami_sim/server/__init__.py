"""The process model: the production server (``serve``), gunicorn's configuration and hardened
worker (``gunicorn_conf``, ``worker``) and the embedded demo (``demo``)."""
