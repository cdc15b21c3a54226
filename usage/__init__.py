"""Live usage: what the pods on each real node were allocated, kept fresh by a watch."""
