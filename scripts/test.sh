#!/usr/bin/env bash
# The whole suite. With DATABASE_URL (or a reachable PostgreSQL on 127.0.0.1:5432) it runs against
# PostgreSQL, then re-runs the API tests on SQLite so both databases are exercised.
# CI=true requires PostgreSQL and Redis to be there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
export PYTHONPATH="$PWD"

pg_up() { "$PY" - <<'PYEOF'
import socket, sys
s = socket.socket(); s.settimeout(1)
try:
    s.connect(("127.0.0.1", 5432)); sys.exit(0)
except OSError:
    sys.exit(1)
PYEOF
}

if [ -z "${DATABASE_URL:-}" ] && pg_up; then
  export DATABASE_URL="postgres://postgres@127.0.0.1:5432/hami_sim"
fi
if [ "${CI:-}" = "true" ] && [ -z "${DATABASE_URL:-}" ]; then
  echo "CI=true but PostgreSQL is not reachable on 127.0.0.1:5432" >&2
  exit 1
fi

"$PY" -m ruff check .
"$PY" -m ruff format --check .
"$PY" -m mypy hami_sim/engine  # as `make lint` does
"$(dirname "$PY")/lint-imports"
"$PY" scripts/limits.py  # modules of about 400 lines, functions under radon complexity 15
bash scripts/engine_alone.sh  # the engine imports in a venv with only its own dependencies
echo "== full suite on ${DATABASE_URL:-sqlite}"
"$PY" -m pytest "$@"
if [ -n "${DATABASE_URL:-}" ]; then
  echo "== API tests on SQLite"
  DATABASE_URL="sqlite:///$PWD/var/test-sqlite.db" "$PY" -m pytest -m api "$@"
fi
