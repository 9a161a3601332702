"""Django settings for Chain Designer: one module, every value from the environment.

Defaults give the embedded setup (SQLite file and a filesystem Celery broker under
``var/``, no server needed). Production sets DEBUG=0, SECRET_KEY, ALLOWED_HOSTS,
DATABASE_URL and CELERY_BROKER_URL; with DEBUG off the HTTPS protections are on
by default so that ``manage.py check --deploy`` is clean. docs/configuration.md
lists every variable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from designer.env import env_bool, env_int, env_list, env_rates, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

DEBUG = env_bool("DEBUG", default=False)

if DEBUG:
    SECRET_KEY = env_str("SECRET_KEY", "django-insecure-dev-only-key-never-use-in-production")
else:
    SECRET_KEY = env_str("SECRET_KEY", required=True)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    # Only for its static files: the API docs then load Swagger UI from us, not a CDN.
    "ninja",
    "template_partials",
    "chains",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy and Permissions-Policy on every response (SECURE_CSP below).
    "designer.security.SecurityHeadersMiddleware",
    # A NUL character in the address, a form or a JSON body is a 400, never a database error.
    "designer.security.RefuseNulMiddleware",
    # Below /api/, a 404 for an unknown address or a 405 is JSON in the error shape too.
    "designer.security.ApiErrorsAsJsonMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Every page needs a signed-in user unless its view says otherwise (sign-in, sign-up).
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # A short chain address (/chains/<key>/) that fits several of the person's chains.
    "chains.views.common.ChooseChainMiddleware",
]

if not DEBUG:
    # Static files from STATIC_ROOT (collectstatic), compressed and cached for good. In
    # development runserver and the test server serve them from their folders instead.
    MIDDLEWARE.insert(1, "whitenoise.middleware.WhiteNoiseMiddleware")

ROOT_URLCONF = "designer.urls"
WSGI_APPLICATION = "designer.wsgi.application"
ASGI_APPLICATION = "designer.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "chains.views.inbox.unread_count",
            ],
        },
    },
]

# Database: DATABASE_URL, e.g. postgres://user@host:5432/name; default an SQLite file.
_database_url = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}")
try:
    DATABASES = {
        "default": dj_database_url.parse(
            _database_url, conn_max_age=env_int("CONN_MAX_AGE", 0), conn_health_checks=True
        )
    }
except ValueError as exc:
    raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from None
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(exist_ok=True)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Cache: each process's memory by default. CACHE_URL (or REDIS_URL) shares one Redis
# cache between processes, which the sign-in limits need when more than one serves.
_cache_url = env_str("CACHE_URL") or env_str("REDIS_URL")
CACHES: dict[str, dict[str, Any]]
if _cache_url is None:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
elif _cache_url.startswith(("redis://", "rediss://", "unix://")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _cache_url,
            # A Redis that is down or hung costs a request a second at most; the limits
            # then count in each process for a while (chains/services/limits.py).
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    raise ImproperlyConfigured(
        f"CACHE_URL/REDIS_URL must be a redis://, rediss:// or unix:// URL; got {_cache_url!r}"
    )

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"
# Whether anyone who reaches the site may create an account at /accounts/signup/ (each
# gets a team of their own). Off by default: owners bring people in; the demo and
# createsuperuser commands make accounts either way.
ALLOW_SIGNUP = env_bool("ALLOW_SIGNUP", default=False)
# Invitations to a team (chains/models/people.py): an unanswered one expires after this
# many days.
INVITATION_DAYS = env_int("INVITATION_DAYS", 7)
if INVITATION_DAYS < 1:
    raise ImproperlyConfigured("INVITATION_DAYS must be at least 1")
# The most teams one account may found (those it founded count, whoever owns them now).
TEAMS_PER_ACCOUNT = env_int("TEAMS_PER_ACCOUNT", 20)
if TEAMS_PER_ACCOUNT < 1:
    raise ImproperlyConfigured("TEAMS_PER_ACCOUNT must be at least 1")
# Sign-in limits (chains/views/signin.py): this many failures for one username, or from
# one client address, within the window, and further attempts are refused until it ends.
SIGNIN_MAX_FAILURES = env_int("SIGNIN_MAX_FAILURES", 5)
SIGNIN_WINDOW_SECONDS = env_int("SIGNIN_WINDOW_SECONDS", 15 * 60)
if SIGNIN_MAX_FAILURES < 1 or SIGNIN_WINDOW_SECONDS < 1:
    raise ImproperlyConfigured("SIGNIN_MAX_FAILURES and SIGNIN_WINDOW_SECONDS must be positive")
# Comments (chains/models/review.py): the most characters of a comment or review note;
# threads per page (the pages, and the API without a limit) and the most one API page
# may ask for; the replies a thread shows in a listing before "more replies".
COMMENT_MAX_CHARS = env_int("COMMENT_MAX_CHARS", 10_000)
COMMENTS_PER_PAGE = env_int("COMMENTS_PER_PAGE", 20)
COMMENTS_MAX_PER_PAGE = env_int("COMMENTS_MAX_PER_PAGE", 100)
COMMENT_REPLIES_SHOWN = env_int("COMMENT_REPLIES_SHOWN", 10)
if min(COMMENT_MAX_CHARS, COMMENTS_PER_PAGE, COMMENT_REPLIES_SHOWN) < 1:
    raise ImproperlyConfigured(
        "COMMENT_MAX_CHARS, COMMENTS_PER_PAGE and COMMENT_REPLIES_SHOWN must be positive"
    )
if COMMENTS_MAX_PER_PAGE < COMMENTS_PER_PAGE:
    raise ImproperlyConfigured("COMMENTS_MAX_PER_PAGE must be at least COMMENTS_PER_PAGE")
# Behind a proxy every client has the proxy's address; with this on, the client address
# is the last one in X-Forwarded-For, the one the proxy added.
SIGNIN_USE_X_FORWARDED_FOR = env_bool("USE_X_FORWARDED_FOR", default=False)
# Rate limits (chains/services/limits.py): per person (per client address for sign-up),
# at most this many requests of each kind per window; RATE_LIMITS="lint=30/10m,import=5/m"
# changes the ones it names. Past a limit the answer is 429 with Retry-After.
RATE_LIMITS = env_rates(
    "RATE_LIMITS",
    {
        "import": (30, 10 * 60),
        "lint": (60, 10 * 60),
        "simulate": (600, 10 * 60),  # each step of the simulator page is one
        "campaign": (20, 60 * 60),
        "comment": (30, 10 * 60),
        "signup": (10, 60 * 60),
        "team": (10, 60 * 60),  # founding a team
        "invite": (60, 60 * 60),  # the member form and new invitation links
        "docs": (60, 10 * 60),  # /api/docs and /api/openapi.json, when not signed in
    },
)

# Logging: records at LOG_LEVEL and above go to standard error, DEBUG on or off, so a
# server error's traceback lands in the process's log (gunicorn's, the container's).
# This replaces Django's default for its own loggers, which writes to the console only
# with DEBUG on and mails errors to ADMINS, which is not set here.
LOG_LEVEL = (env_str("LOG_LEVEL", "INFO") or "INFO").upper()
if LOG_LEVEL not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
    raise ImproperlyConfigured(
        f"LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL; got {LOG_LEVEL!r}"
    )
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "{asctime} {levelname} {name} {message}", "style": "{"},
    },
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"handlers": ["stderr"], "level": LOG_LEVEL, "propagate": False},
    },
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every start without it
# Production serves collectstatic's output with hashed names (cached for a year) and
# gzip/Brotli copies; development and the tests read the files where they are.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# HTTPS: on whenever DEBUG is off; each can still be switched by its own variable.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=not DEBUG)
# A load balancer probes /healthz on the instance itself, over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", default=not DEBUG)
if env_bool("USE_X_FORWARDED_PROTO", default=False):
    # Only behind a proxy that sets this header itself and strips it from clients.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Headers on every response. Django's SecurityMiddleware and XFrameOptionsMiddleware
# send the first four; designer/security.py the Content-Security-Policy and the
# Permissions-Policy. Pages load scripts and styles only from our static files: no
# inline <script>, style="..." or <style>, no eval, no other origin.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
_policy = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "font-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
if _csp_report_uri := env_str("CSP_REPORT_URI"):
    _policy["report-uri"] = [_csp_report_uri]
# The same shape as Django 6's SECURE_CSP / SECURE_CSP_REPORT_ONLY: CSP_REPORT_ONLY=1
# moves the policy to the report-only header, which reports violations but blocks nothing.
if env_bool("CSP_REPORT_ONLY", default=False):
    SECURE_CSP: dict[str, list[str]] = {}
    SECURE_CSP_REPORT_ONLY = _policy
else:
    SECURE_CSP = _policy
    SECURE_CSP_REPORT_ONLY = {}
# Powerful browser features the app never uses, denied to every origin including ours.
PERMISSIONS_POLICY: dict[str, list[str]] = {
    feature: []
    for feature in (
        "accelerometer",
        "camera",
        "display-capture",
        "geolocation",
        "gyroscope",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "serial",
        "usb",
    )
}

# Celery: embedded default is kombu's filesystem transport (no server) and a
# file result backend, both under var/; production points both at Redis.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "filesystem://")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", f"file://{VAR_DIR / 'results'}")
# The queue tasks are sent to and workers take from: installations (or test runs)
# sharing one broker keep apart by naming their own.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dirs = {name: VAR_DIR / "broker" / name for name in ("queue", "processed", "control")}
    for _folder in _broker_dirs.values():
        _folder.mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # One folder for both directions: producer and worker share this machine.
        "data_folder_in": str(_broker_dirs["queue"]),
        "data_folder_out": str(_broker_dirs["queue"]),
        "processed_folder": str(_broker_dirs["processed"]),
        "store_processed": False,
        # Broadcast (remote control) exchanges; kombu's default is ./control.
        "control_folder": str(_broker_dirs["control"]),
        # How often an idle worker looks for new files (kombu's default is 1 s): a
        # directory listing five times a second is cheap, and a launch starts sooner.
        "polling_interval": 0.2,
    }
if CELERY_RESULT_BACKEND.startswith("file://"):
    Path(CELERY_RESULT_BACKEND.removeprefix("file://")).mkdir(parents=True, exist_ok=True)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A broker that goes away (a Redis restart, a dropped connection): the worker retries
# for ever instead of exiting after a hundred tries, and the shard it runs goes on to
# its end (designer/celery.py). A send gives up within seconds, so a launch answers
# 503 rather than hanging.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 1,
}
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 3
if CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # Connect or fail within 3 s; find a connection the server dropped before using it.
    # No read waits for ever: kombu's BRPOP returns within a second, so 10 s only ends a
    # read whose reply will never come (a worker stopping while its poll's reply was
    # taken by another reader hung there, in the test suite's worker thread).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "socket_connect_timeout": 3,
        "socket_timeout": 10,
        "socket_keepalive": True,
        "health_check_interval": 10,
    }

# E-mail. Notifications (review requests, mentions, decisions) always reach the inbox;
# with NOTIFY_BY_EMAIL (on by default once EMAIL_HOST is set) they are mailed as well,
# through Django's SMTP backend or the one EMAIL_BACKEND names. SITE_URL makes the
# links in them absolute.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=False)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Chain Designer <noreply@localhost>")
NOTIFY_BY_EMAIL = env_bool("NOTIFY_BY_EMAIL", default=bool(env_str("EMAIL_HOST")))
SITE_URL = env_str("SITE_URL", "")

# Campaign caps and fair sharing (docs/configuration.md, "Campaigns"). A campaign's
# states are shared out among its shards; the time limit is per shard, and Celery's
# soft and hard limits follow it (chains.tasks); the memory cap is the worker
# process's resident memory, and a worker process past it is replaced after its task.
CAMPAIGN_MAX_STATES = env_int("CAMPAIGN_MAX_STATES", 50_000)
CAMPAIGN_TIME_LIMIT = env_int("CAMPAIGN_TIME_LIMIT", 300)
CAMPAIGN_MAX_MEMORY_MB = env_int("CAMPAIGN_MAX_MEMORY_MB", 768)
CAMPAIGN_TEAM_CAMPAIGNS = env_int("CAMPAIGN_TEAM_CAMPAIGNS", 2)
CAMPAIGN_TEAM_SHARDS = env_int("CAMPAIGN_TEAM_SHARDS", 2)
for _name in (
    "CAMPAIGN_MAX_STATES",
    "CAMPAIGN_TIME_LIMIT",
    "CAMPAIGN_MAX_MEMORY_MB",
    "CAMPAIGN_TEAM_CAMPAIGNS",
    "CAMPAIGN_TEAM_SHARDS",
):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be at least 1; got {globals()[_name]}")
# A worker process takes one message at a time, so shards of other teams queued
# meanwhile are next, and one whose memory grew past the cap is replaced.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_WORKER_MAX_MEMORY_PER_CHILD = (CAMPAIGN_MAX_MEMORY_MB + 256) * 1024  # KB

# Largest chain document accepted by import (command line, upload and paste).
CHAIN_UPLOAD_MAX_BYTES = 2 * 1024 * 1024
# Largest provider OpenAPI document read (a page's upload or paste, `chain openapi`):
# real ones run to megabytes (Stripe's is 4 MB).
OPENAPI_UPLOAD_MAX_BYTES = env_int("OPENAPI_UPLOAD_MAX_BYTES", 10 * 1024 * 1024)
if OPENAPI_UPLOAD_MAX_BYTES < 1:
    raise ImproperlyConfigured("OPENAPI_UPLOAD_MAX_BYTES must be positive")
# A request's form fields (a pasted document and the rest of the form) may be a little
# larger; beyond that Django refuses the request with 400 before any view reads it.
# Uploaded files do not count here: the import views check their size themselves (an
# OpenAPI document larger than a chain is uploaded, not pasted).
DATA_UPLOAD_MAX_MEMORY_SIZE = CHAIN_UPLOAD_MAX_BYTES + 256 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE
# The largest form (an element's fields with a multi-select of handles) posts far fewer.
DATA_UPLOAD_MAX_NUMBER_FIELDS = 500

# Bounded work per page (issue 14). Trying a quick fix validates the whole chain, so the
# workspace tries the fixes of its first WORKSPACE_EAGER_FIXES findings only, and fewer on
# a large chain: as many as fit WORKSPACE_FIX_BUDGET_BYTES of document validated again
# (about 0.6 s). The others load when the user opens them.
WORKSPACE_EAGER_FIXES = env_int("WORKSPACE_EAGER_FIXES", 8)
WORKSPACE_FIX_BUDGET_BYTES = env_int("WORKSPACE_FIX_BUDGET_BYTES", 500_000)
# Graphviz lays out the graph of a chain of at most this many actions, handles and gates
# (a few seconds at this size; past it the tabs alone show the chain).
WORKSPACE_GRAPH_MAX_NODES = env_int("WORKSPACE_GRAPH_MAX_NODES", 3000)
# Seconds Graphviz may take to lay out a page's graph (workspace, simulator, changes). A
# layout that runs out of time is remembered for ten minutes, so such a chain costs this
# once, not on every view.
GRAPH_LAYOUT_SECONDS = env_int("GRAPH_LAYOUT_SECONDS", 4)
if GRAPH_LAYOUT_SECONDS < 1:
    raise ImproperlyConfigured("GRAPH_LAYOUT_SECONDS must be at least 1")
# The workspace explores each saved revision at up to two faults beside lint, loading the
# answer in a request of its own after the page (chains/services/save_check.py); off, it
# offers a link that asks for it.
WORKSPACE_EXPLORE_ON_SAVE = env_bool("WORKSPACE_EXPLORE_ON_SAVE", default=True)
# The lint panel lists this many findings; the lint API and command list them all.
WORKSPACE_FINDINGS_SHOWN = env_int("WORKSPACE_FINDINGS_SHOWN", 300)
if WORKSPACE_FINDINGS_SHOWN < 1:
    raise ImproperlyConfigured("WORKSPACE_FINDINGS_SHOWN must be at least 1")
if WORKSPACE_EAGER_FIXES < 0 or WORKSPACE_FIX_BUDGET_BYTES < 0:
    raise ImproperlyConfigured(
        "WORKSPACE_EAGER_FIXES and WORKSPACE_FIX_BUDGET_BYTES must be 0 or more"
    )
# Each process keeps parsed documents, and the findings' fixes and coverage it computed,
# by content hash; these bound them by estimated bytes (a parsed document takes about
# 25 times its JSON: one at the 2 MB upload limit, about 50 MB).
PARSE_CACHE_BYTES = env_int("PARSE_CACHE_BYTES", 200_000_000)
DERIVED_CACHE_BYTES = env_int("DERIVED_CACHE_BYTES", 50_000_000)
if PARSE_CACHE_BYTES < 0 or DERIVED_CACHE_BYTES < 0:
    raise ImproperlyConfigured("PARSE_CACHE_BYTES and DERIVED_CACHE_BYTES must be 0 or more")
