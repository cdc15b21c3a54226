"""The project runtime layer: what every app shares and the engine must not know.

Layers only point down: ``hami_sim.engine`` <- ``hami_sim.runtime`` (the process-wide simulator,
the inventory resolver hook, task-run records, settings) <- ``profiles`` <- ``usage``
<- ``simulations`` <- ``decisions`` <- ``dashboard``. ``make lint`` checks it with import-linter.
"""
