"""Held-out measurement of the redactor on secret phrasings written without reading it."""
