"""The HAMi v2.10.0 device model in pure Python (no Django imports).

Data flows one way: parse (``quantity``, ``annotations``, ``requests``) -> model (``model``)
-> fit/score (``fit``, ``policy``, vendors) -> verdict (``simulate``) -> serialize (callers).
"""
