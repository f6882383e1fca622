"""Shared fixtures. Real-CLI tests are marked ``realcli``; see tests/realcli/conftest.py."""
