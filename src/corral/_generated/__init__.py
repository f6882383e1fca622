"""Code generated from vendor schemas. Never edit by hand; each package says how to regenerate it."""
