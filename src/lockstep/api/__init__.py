"""The HTTP API: thin routes that parse, call a service, and render the Run:ai wire format."""
