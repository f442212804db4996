"""Fakes for tests: scripted stand-ins for external services (no mocks)."""
