"""The chain domain: pure Python, no Django.

Everything a chain *is* lives here (the document model, verdict expressions,
import and export); the web UI, the API and ``manage.py chain`` are shells
over these functions.
"""
