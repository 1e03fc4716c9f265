"""Helpers shared by the test suite: live servers, an API client, request builders, databases."""
