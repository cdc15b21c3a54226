#!/usr/bin/env bash
# The engine imports alone: a venv with only requirements-engine.txt (no Django, no Celery) imports
# every module of hami_sim/engine/. Run by scripts/test.sh (so by CI) and `make lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=var/engine-venv
if [ ! -x "$VENV/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check -r requirements-engine.txt
"$VENV/bin/python" - "$PWD" <<'PYEOF'
import importlib, pkgutil, sys

sys.path.insert(0, sys.argv[1])
import hami_sim.engine as engine

names = [m.name for m in pkgutil.walk_packages(engine.__path__, "hami_sim.engine.")]
for name in names:
    importlib.import_module(name)
leaked = sorted({m.split(".")[0] for m in sys.modules} & {"django", "rest_framework", "celery", "kombu", "grpc"})
assert not leaked, f"the engine pulled in {leaked}"
assert not [m for m in sys.modules if m.startswith(("hami_sim.project", "hami_sim.server", "hami_sim.runtime"))]
print(f"engine imports alone: {len(names)} modules with only requirements-engine.txt")
PYEOF
