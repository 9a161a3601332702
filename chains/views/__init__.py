"""Web views, one module per concern; each view parses the request, calls a verb, renders."""
