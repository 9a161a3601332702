"""Use cases the pages, the API and the command line share: one function each.

A service orchestrates the domain core (``chains.core``) and persistence
(``chains.models``) for one thing a person does; it never reads a request or
prints. The three doors (``views/``, ``api.py``, ``management/``) turn their
input into its arguments and its result into a page, JSON or text.
"""
