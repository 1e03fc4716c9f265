"""Pydantic models of the Run:ai wire format (camelCase on the wire), one module per area.

Shared by the server and the Python SDK. Requests are validated strictly: a number sent as a
string, an unknown field or a value outside an enum is refused with the field's path.
"""
