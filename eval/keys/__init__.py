"""Measurements behind keys decided by meaning (``ingest.tau_key``)."""
