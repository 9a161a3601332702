#!/bin/sh
# The container's entry point (and make deploy-check's): one image, two roles.
#   web     migrate the database, then serve with gunicorn (static files by WhiteNoise)
#   worker  the Celery worker that runs explorer campaigns and sends e-mail, kept running
# Anything else runs as given, e.g. `python manage.py createsuperuser`.
# Settings come from the environment (docs/configuration.md, "Deployment").
set -eu

case "${1:-web}" in
  web)
    python manage.py migrate --noinput
    exec gunicorn designer.wsgi \
      --bind "${BIND:-0.0.0.0:8000}" \
      --workers "${WEB_CONCURRENCY:-3}" \
      --timeout "${WEB_TIMEOUT:-30}" \
      --access-logfile - \
      --forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-127.0.0.1}"
    ;;
  worker)
    # Started again should it ever exit non-zero (designer/supervise.py).
    exec python -m designer.supervise worker \
      --loglevel "${CELERY_LOG_LEVEL:-INFO}" \
      --concurrency "${CELERY_CONCURRENCY:-2}"
    ;;
  *)
    exec "$@"
    ;;
esac
