"""The chains app: persistence, web views and jobs around the pure domain in ``chains.core``."""
