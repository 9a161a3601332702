# Chain Designer in production: one image for the web app (gunicorn, WhiteNoise) and the
# Celery worker. compose.yaml runs it with PostgreSQL and Redis; docs/configuration.md,
# "Deployment", lists every variable.

# htmx comes from the npm registry, as `make static` fetches it.
FROM node:20-slim AS assets
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund \
 && mkdir -p static/vendor/htmx \
 && cp node_modules/htmx.org/dist/htmx.min.js static/vendor/htmx/

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
# Graphviz draws the handle graph.
RUN apt-get update \
 && apt-get install -y --no-install-recommends graphviz \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 1000 chains
WORKDIR /app
COPY pyproject.toml README.md manage.py ./
COPY chains chains
COPY designer designer
RUN pip install .
COPY templates templates
COPY docs/glossary.md docs/glossary.md
COPY static static
COPY --from=assets /build/static/vendor static/vendor
COPY deploy deploy
# collectstatic needs settings but no secret of the deployment: a throwaway key, DEBUG off.
RUN DEBUG=0 SECRET_KEY=collectstatic-only-not-a-secret-of-any-deployment-xxxxxxxxxxxx \
    python manage.py collectstatic --noinput \
 && mkdir -p var && chown -R chains:chains var
USER chains
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD python -c "import os, urllib.request as u; u.urlopen(u.Request('http://127.0.0.1:8000/healthz', headers={'Host': os.environ.get('HEALTHCHECK_HOST', 'localhost')}), timeout=4)"
ENTRYPOINT ["/app/deploy/entrypoint.sh"]
CMD ["web"]
